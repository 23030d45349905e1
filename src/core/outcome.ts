// From a reduction and what happened to the process, one verdict. Pure.
import { classifyFault, type Fault, type FaultKind } from "./faults.ts";
import { secrets } from "./redact.ts";
import type { Reduction } from "./reduction.ts";
import type { StopKind } from "./supervisor.ts";
import { clean } from "./text.ts";
import type { Status, Verdict } from "./verdict.ts";

export type StoppedBy = StopKind | "interrupt" | "linger" | "internal";

export interface ProcessOutcome {
  exitCode: number | null;
  /** The signal that ended the child, when one did. */
  signal: string | null;
  /** Why agentport itself ended the child, when it did. */
  stoppedBy: StoppedBy | null;
  /** The supervisor's one-line reason, when it stopped the child. */
  stopReason?: string;
  /** The last lines the child wrote on stderr, ANSI-stripped and bounded. */
  stderrTail: string;
  /** How the child failed to start, when it did. */
  spawnError?: "not_found" | "not_executable" | "spawn_failed";
}

export interface Decided {
  verdict: Verdict;
  /** The failure points at the environment (auth, quota, network, a missing binary). */
  fault: Fault | null;
}

const MAX_FAILURE_CHARS = 600;

// Faults that are the environment's, not the provider's: exit 5. A 5xx or an
// overload is still named in the verdict (`fault`), but it is a provider error
// and exits 1, as the exit-code table has it.
const ENVIRONMENT_FAULTS: ReadonlySet<FaultKind> = new Set(["missing_binary", "cannot_start", "auth", "quota", "rate_limit", "network", "dns", "timeout"]);

const SUPERVISED: Partial<Record<StoppedBy, Status>> = {
  timeout: "timeout",
  stall: "stalled",
  budget: "over_budget",
  cost: "over_budget",
  loop: "looping",
};

function withTail(reason: string, tail: string): string {
  const last = clean(tail.split("\n").filter((l) => l.trim()).slice(-3).join(" | "), 240);
  return last ? `${reason}; stderr: ${last}` : reason;
}

function statusOf(agent: Verdict["agent"], r: Reduction, p: ProcessOutcome): { status: Status; failure: string | null } {
  const finished = r.failure === null && r.text !== null;
  if (p.spawnError !== undefined) return { status: "failed", failure: r.failure ?? `${agent}: could not start (${p.spawnError})` };
  if (p.stoppedBy === "interrupt") return { status: "aborted", failure: "interrupted: agentport was asked to stop and ended the agent" };
  // --max-turns on pi: the run did not finish its work, whatever text it had (failure kind turn_limit).
  if (p.stoppedBy === "turns") return { status: "failed", failure: p.stopReason ?? "turn limit reached" };
  const supervised = p.stoppedBy === null ? undefined : SUPERVISED[p.stoppedBy];
  // A result that arrived whole keeps its verdict, whatever ended the process after it.
  if (supervised !== undefined && !finished) return { status: supervised, failure: p.stopReason ?? `stopped by supervision (${p.stoppedBy})` };
  // claude stopped itself at --max-budget-usd (what agentport's --max-cost passes): the supervisor's status for it.
  if (r.summary.result_subtype === "error_max_budget_usd") return { status: "over_budget", failure: r.failure ?? "over budget (--max-cost)" };
  if (p.stoppedBy === "internal") return { status: "failed", failure: r.failure ?? "agentport hit an internal error and ended the agent" };
  // A replay has no process at all: no exit code and no signal.
  if (finished && (p.exitCode === 0 || p.stoppedBy !== null || (p.exitCode === null && p.signal === null))) {
    return { status: "completed", failure: null };
  }
  if (p.signal !== null && p.stoppedBy === null) {
    return { status: "crashed", failure: withTail(`${agent}: killed by ${p.signal}${r.failure ? ` (${r.failure})` : ""}`, p.stderrTail) };
  }
  if (r.failure === null) return { status: "failed", failure: `${agent}: exited with code ${p.exitCode} after its result` };
  if (r.exitedEarly && p.exitCode !== null) return { status: "failed", failure: withTail(`${r.failure} (exit code ${p.exitCode})`, p.stderrTail) };
  return { status: "failed", failure: r.failure };
}

export function decide(agent: Verdict["agent"], r: Reduction, p: ProcessOutcome): Decided {
  const { status, failure } = statusOf(agent, r, p);
  const ok = status === "completed";
  // Only a run that failed on its own can point at the environment: a
  // supervision stop or an interrupt is agentport's doing.
  const fault =
    status === "failed" || status === "crashed"
      ? classifyFault({
          stderrTail: p.stderrTail,
          failure: r.failure,
          apiErrorStatus: typeof r.summary.api_error_status === "number" ? r.summary.api_error_status : null,
          retryErrors: typeof r.summary.last_retry_error === "string" ? [r.summary.last_retry_error] : [],
          spawnError: p.spawnError,
        })
      : null;
  const summary = { ...r.summary };
  if (p.exitCode !== null) summary.exit_code = p.exitCode;
  if (p.signal !== null) summary.signal = p.signal;
  if (p.stoppedBy !== null) summary.stopped_by = p.stoppedBy;
  return {
    verdict: {
      agent,
      session_id: r.sessionId,
      status,
      ok,
      text: ok ? r.text : null,
      envelope: null,
      // The agent's error text and stderr can quote a key: redacted like fault evidence.
      failure: failure === null ? null : clean(secrets.diagnostic(failure), MAX_FAILURE_CHARS),
      stop_reason: r.stopReason,
      cost_micro_usd: r.costMicroUsd,
      tokens: r.tokens,
      refused: r.refused,
      env_fault: fault !== null && ENVIRONMENT_FAULTS.has(fault.kind),
      fault: fault,
      summary,
    },
    fault,
  };
}
