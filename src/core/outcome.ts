// What happened to the agent's process, as the driver (or an RPC turn) saw it.
// The judge (judge.ts) weighs it against the reduction. Pure types.
import type { StopCause } from "./failure.ts";

/** Who ended the process when agentport did: a stop cause, the linger after a result, or an internal error. */
export type StoppedBy = StopCause | "linger" | "internal";

export interface ProcessOutcome {
  exitCode: number | null;
  /** The signal that ended the child, when one did. */
  signal: string | null;
  /** Why agentport itself ended the child, when it did. */
  stoppedBy: StoppedBy | null;
  /** The supervisor's one-line reason, when it stopped the child. */
  stopReason?: string;
  /** The stream already held the run's end when agentport stopped it (a result that arrived whole keeps its verdict). */
  finishedAtStop?: boolean;
  /** The last lines the child wrote on stderr, ANSI-stripped and bounded. */
  stderrTail: string;
  /** How the child failed to start, when it did. */
  spawnError?: "not_found" | "not_executable" | "spawn_failed";
}

/** A replay, or a turn whose process lives on: no exit code, no signal, no stop. */
export const NO_PROCESS: ProcessOutcome = { exitCode: null, signal: null, stoppedBy: null, stderrTail: "" };
