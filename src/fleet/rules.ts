// The queue's rules, pure: a task's states, and what an expired lease leaves.
// A lease is held by one worker for one attempt (the attempt number is the
// fencing token); every write of the holder names both, so a worker that
// lost its lease writes nothing.

export const TASK_STATES = ["queued", "running", "done", "interrupted", "cancelled"] as const;
export type TaskState = (typeof TASK_STATES)[number];

/** A state no worker changes again: the task has its final result. */
export const isFinal = (state: TaskState): boolean => state === "done" || state === "interrupted" || state === "cancelled";

export interface Lapsed {
  /** Whether the attempt whose lease expired had started its agent. */
  agentStarted: boolean;
  /** How many attempts started an agent, that one included. */
  runs: number;
  retries: number;
}

/**
 * An expired lease: an attempt that never started its agent spent nothing and
 * is queued again; one that did is `interrupted`, and queued again only while
 * the task allows another run (runs ≤ retries).
 */
export function afterLapse(l: Lapsed): "queued" | "interrupted" {
  if (!l.agentStarted) return "queued";
  return l.runs <= l.retries ? "queued" : "interrupted";
}

/** The default lease, and how often its holder renews it. */
export const LEASE_MS = 30_000;
export const heartbeatMs = (leaseMs: number): number => Math.max(100, Math.floor(leaseMs / 6));
