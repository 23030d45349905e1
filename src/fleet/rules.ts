// The queue's rules, pure: a task's states, what an expired lease leaves,
// which worker may take which task. A lease is held by one worker for one
// attempt (the attempt number is the fencing token); every write of the
// holder names both, so a worker that lost its lease writes nothing.

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
  /** `agentport cancel` asked for the task to stop. */
  cancelRequested: boolean;
}

/**
 * An expired lease: a task asked to stop is `cancelled`; an attempt that never
 * started its agent spent nothing and is queued again; one that did is
 * `interrupted`, and queued again only while the task allows another run
 * (runs ≤ retries).
 */
export function afterLapse(l: Lapsed): "queued" | "interrupted" | "cancelled" {
  if (l.cancelRequested) return "cancelled";
  if (!l.agentStarted) return "queued";
  return l.runs <= l.retries ? "queued" : "interrupted";
}

/** The default lease, and how often its holder renews it. */
export const LEASE_MS = 30_000;
export const heartbeatMs = (leaseMs: number): number => Math.max(100, Math.floor(leaseMs / 6));
/**
 * How long a holder keeps its agent while no renewal succeeds (the database
 * unreachable): a heartbeat short of the lease, counted from the last renewal
 * sent, so the agent is stopped before the lease can lapse and the task be
 * run elsewhere.
 */
export const graceMs = (leaseMs: number): number => leaseMs - heartbeatMs(leaseMs);

/** A label: letters, digits and `._:=/-`, up to 64 characters. */
export const LABEL = /^[A-Za-z0-9][A-Za-z0-9._:=/-]{0,63}$/;

/** What a worker offers, as the claim matches it. */
export interface Offer {
  machineId: string;
  hostname: string;
  labels: readonly string[];
  agents: readonly string[];
  /** The folder its workspaces are in (a resumed session's birth folder must be under it). */
  workspaces: string;
}

/** What a task needs of its worker. */
export interface Needs {
  agent: string;
  requires: readonly string[];
  /** A resume: the session's birth host (machine id) and folder; null otherwise. */
  birth: { machineId: string; hostname: string | null; folder: string } | null;
}

/** Why `offer` cannot take a task needing `needs`, or null when it can. The claim's SQL applies the same rule. */
export function mismatch(needs: Needs, offer: Offer): string | null {
  if (needs.birth !== null && (needs.birth.machineId !== offer.machineId || !needs.birth.folder.startsWith(`${offer.workspaces}/`)))
    return `its session was born on host ${needs.birth.hostname ?? "?"} (${needs.birth.machineId.slice(0, 8)}) in ${needs.birth.folder}`;
  if (!offer.agents.includes(needs.agent)) return `needs agent ${needs.agent}`;
  const missing = needs.requires.filter((l) => !offer.labels.includes(l));
  return missing.length === 0 ? null : `requires ${missing.join(", ")}`;
}

/** Why a queued task waits when no live worker can take it, or null when one can. */
export function waiting(needs: Needs, offers: readonly Offer[]): string | null {
  if (offers.length === 0) return "no live worker";
  const why = offers.map((o) => mismatch(needs, o));
  if (why.some((w) => w === null)) return null;
  return `no live worker can take it: ${[...new Set(why)].join("; ")}`;
}

/** The periods a queue's budget is counted over (the database's calendar: date_trunc). */
export const PERIODS = ["hour", "day", "week", "month"] as const;
export type Period = (typeof PERIODS)[number];

/** A queue's budget and what the fleet spent in its current period. */
export interface Budget {
  name: string;
  budgetMicroUsd: number;
  per: Period;
  /** The reported or derived cost of the tasks finished in this period, and of the running ones so far. */
  spentMicroUsd: number;
  /** The running tasks' part of it. */
  runningMicroUsd: number;
  /** Tasks finished in this period whose run reported no cost (unknown, never $0). */
  unknownCosts: number;
}

/** Micro-USD as dollars, to the hundredth of a cent. */
export const usd = (micro: number) => `$${(micro / 1e6).toFixed(4)}`;

/**
 * Why a queue's tasks wait for its budget, or null while it has room: spent
 * at or over the budget, or a cost the fleet cannot know (unknown is a fault,
 * never $0). A running task's cost so far counts (it is not stopped by it).
 */
export function overBudget(b: Budget): string | null {
  if (b.unknownCosts > 0)
    return `queue ${b.name}: ${b.unknownCosts} task(s) this ${b.per} reported no cost, so its ${usd(b.budgetMicroUsd)} per ${b.per} cannot be kept`;
  if (b.spentMicroUsd < b.budgetMicroUsd) return null;
  const running = b.runningMicroUsd > 0 ? " (running tasks so far included)" : "";
  return `queue ${b.name} spent ${usd(b.spentMicroUsd)} of its ${usd(b.budgetMicroUsd)} per ${b.per}${running}`;
}
