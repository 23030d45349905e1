// From a reduction and what happened to the process, one verdict. Pure.
import type { Reduction } from "./reduction.ts";
import { clean } from "./text.ts";
import type { Status, Verdict } from "./verdict.ts";

export interface ProcessOutcome {
  exitCode: number | null;
  /** The signal that ended the child, when one did. */
  signal: string | null;
  /** Why agentport itself ended the child, when it did. */
  stoppedBy: "timeout" | "interrupt" | "linger" | "internal" | null;
  timeoutSeconds?: number;
  /** The last lines the child wrote on stderr, ANSI-stripped and bounded. */
  stderrTail: string;
}

export interface Decided {
  verdict: Verdict;
  /** The failure points at the environment (auth, quota, network, a missing binary). */
  environmentFault: string | null;
}

const MAX_FAILURE_CHARS = 600;

function withTail(reason: string, tail: string): string {
  const last = clean(tail.split("\n").filter((l) => l.trim()).slice(-3).join(" | "), 240);
  return last ? `${reason}; stderr: ${last}` : reason;
}

export function decide(agent: Verdict["agent"], r: Reduction, p: ProcessOutcome): Decided {
  let status: Status;
  let failure: string | null = r.failure;
  const finished = r.failure === null && r.text !== null;

  if (p.stoppedBy === "interrupt") {
    status = "aborted";
    failure = "interrupted: agentport was asked to stop and ended the agent";
  } else if (p.stoppedBy === "timeout" && !finished) {
    status = "timeout";
    failure = `timed out after ${p.timeoutSeconds ?? "?"} s; the agent's process group was killed`;
  } else if (p.stoppedBy === "internal") {
    status = "failed";
    failure = failure ?? "agentport hit an internal error and ended the agent";
  } else if (finished && (p.exitCode === 0 || p.stoppedBy !== null || (p.exitCode === null && p.signal === null))) {
    // A result arrived whole. A child ended by agentport after it (lingering,
    // or a timeout that came after the result) keeps that verdict; a replay
    // has no process at all (no exit code, no signal).
    status = "completed";
  } else if (p.signal !== null && p.stoppedBy === null) {
    status = "crashed";
    failure = withTail(`${agent}: killed by ${p.signal}${r.failure ? ` (${r.failure})` : ""}`, p.stderrTail);
  } else {
    status = "failed";
    if (failure === null) failure = `${agent}: exited with code ${p.exitCode} after its result`;
    else if (r.exitedEarly && p.exitCode !== null) failure = withTail(`${failure} (exit code ${p.exitCode})`, p.stderrTail);
  }
  const ok = status === "completed";
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
      failure: failure === null ? null : clean(failure, MAX_FAILURE_CHARS),
      stop_reason: r.stopReason,
      cost_micro_usd: r.costMicroUsd,
      tokens: r.tokens,
      refused: r.refused,
      summary,
    },
    environmentFault: ok ? null : r.environmentFault,
  };
}
