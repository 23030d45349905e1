// Which environment fault a run that did not complete points at (faults.ts
// reads its words), whether the fault is the environment's (exit 5) or the
// provider's, and when a quota wall lifts. Pure.
import { classifyFault, type Fault } from "./faults.ts";
import type { FaultKind } from "./fault-rows.ts";
import type { Failure, StopCause } from "./failure.ts";
import type { ProcessOutcome } from "./outcome.ts";
import type { Reduction } from "./reduction.ts";
import type { Status } from "./verdict.ts";
import { resumeAfter, resumeHint } from "./wall.ts";

/** What the fault is read from: the reduction, the process, and when the run ended (epoch ms; absent in a replay). */
interface Ended {
  reduction: Reduction;
  proc: ProcessOutcome;
  endedAtMs?: number;
}

// Faults that are the environment's, not the provider's: exit 5. A 5xx or an
// overload is still named in the verdict (`fault`), but it is a provider error
// and exits 1, as the exit-code table has it.
const ENVIRONMENT_FAULTS: ReadonlySet<FaultKind> = new Set([
  "missing_binary",
  "cannot_start",
  "auth",
  "quota_wall",
  "quota",
  "rate_limit",
  "network",
  "dns",
  "timeout",
]);

export const isEnvironmentFault = (kind: FaultKind): boolean => ENVIRONMENT_FAULTS.has(kind);

/** The environment fault a run that did not complete points at; none for a completed or interrupted one. */
export function faultOf(input: Ended, status: Status, f: Failure | null, cause: StopCause | null): Fault | null {
  const { reduction: r, proc: p } = input;
  if (status === "completed" || cause === "interrupt" || f === null) return null;
  // A retry on stderr before the model's last output was survived: not why the run ended.
  const stderrTail = r.awaitingModel === false ? "" : p.stderrTail;
  const apiErrorStatus = typeof r.summary.api_error_status === "number" ? r.summary.api_error_status : null;
  const lastRetry = typeof r.summary.last_retry_error === "string" ? r.summary.last_retry_error : null;
  if (f.kind === "stopped") {
    // Stopped while the agent was retrying the provider (or waiting on the network): the environment's trouble.
    const pending = r.pendingRetryError;
    return classifyFault({ stderrTail, failure: null, retryErrors: pending === null ? [] : [pending] });
  }
  return classifyFault({
    stderrTail,
    failure: r.failure?.message ?? null,
    apiErrorStatus,
    retryErrors: lastRetry === null ? [] : [lastRetry],
    spawnError: p.spawnError,
    wall: r.wall !== undefined,
  });
}

/** A run at a quota wall: when it may go on (the agent's record first, then its words), else null. */
export function wallLifts(input: Ended, f: Failure | null): string | null {
  const { reduction: r, proc: p } = input;
  const hints = [
    r.wall?.resetsAtMs == null ? null : { atMs: r.wall.resetsAtMs, afterMs: null },
    resumeHint(f?.message ?? ""),
    resumeHint(r.pendingRetryError ?? ""),
    resumeHint(p.stderrTail),
  ];
  return resumeAfter(hints, input.endedAtMs ?? null);
}
