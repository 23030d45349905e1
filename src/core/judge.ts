// The one decision: a reduction (what the stream says), the process outcome
// (exit code, signal, who stopped it and whether the run had finished by
// then), the envelope check and the agent's unmet requirement, in; one frozen
// verdict out. Pure; the same for claude, pi json and every RPC turn.
//
// In order (README "The verdict rule" is this list as a table):
//   1. the agent could not start → failed, environment (exit 5);
//   2. agentport failed → failed, internal;
//   3. an unmet requirement (pi: extensions not proven, another model) → failed;
//   4. a valid envelope was delivered → completed, whatever came after it
//      (the envelope is the deliverable; the later trouble is `summary.warning`);
//   5. agentport stopped the run before it finished → its stop status;
//   6. a signal agentport did not send → crashed, exited;
//   7. the stream's own failure (protocol, provider, the agent's own error, no result) → failed;
//   8. a non-zero exit after the result → failed, exited;
//   9. no result → failed, no_result;
//  10. an envelope required and missing or invalid → failed (worth a nudge);
//  11. no text, no envelope, no tool call → failed, empty_answer;
//  12. completed.
// A run that did not complete and that the classifier finds at a quota wall
// (a usage limit that resets later) is `parked`, with `resume_after` when known.
// A stop after the run finished (a linger, a timeout racing the last line)
// changes nothing. Stopped and failed runs are classified for an
// environment fault; an interrupt is never the environment's.
import { evidenceFailure, type WorkEvidence } from "./evidence.ts";
import type { Fault } from "./faults.ts";
import { envelopeOf, type EnvelopeInput } from "./envelope-verdict.ts";
import { faultOf, isEnvironmentFault, wallLifts } from "./verdict-fault.ts";
import { failure, isStopCause, type Failure, type StopCause } from "./failure.ts";
import type { ProcessOutcome } from "./outcome.ts";
import type { Reduction, Summary } from "./reduction.ts";
import { secrets } from "./redact.ts";
import { clean } from "./text.ts";
import { SCHEMA_VERSION, STOP_STATUS, type Refused, type Status, type Verdict } from "./verdict.ts";
import { refusalFailure } from "./refusal.ts";
import { versionTested } from "./drift.ts";

export interface JudgeInput {
  agent: Verdict["agent"];
  reduction: Reduction;
  proc: ProcessOutcome;
  /** The session agentport knows, when the stream names none. */
  sessionId?: string | null;
  envelope?: EnvelopeInput | null;
  /** The agent's first unmet requirement (see pi/requirements.ts), else null. */
  requirement?: Failure | null;
  /** The supervisor's facts (expired clock, budget, loop), for the summary. */
  facts?: Summary;
  /** Refusals seen outside the stream (RPC dialogs). */
  refused?: Refused[];
  /** --fail-on-refusal: a completed run with refused requests fails. */
  failOnRefusal?: boolean;
  /** What the run left in its folder, and what it was expected to (--expect-change, --expect-file). */
  work?: WorkEvidence;
  /** The agent's version from its cached probe, when known. */
  agentVersion?: string | null;
  /** When the run ended (epoch ms): a quota wall's delay counts from it. Absent in a replay. */
  endedAtMs?: number;
}

export interface Decided {
  verdict: Verdict;
  /** The failure points at the environment (auth, quota, network, a missing binary). */
  fault: Fault | null;
}

const MAX_FAILURE_CHARS = 600;

interface Problem {
  status: Status;
  failure: Failure;
}

function stderrLines(tail: string): string {
  return clean(
    tail
      .split("\n")
      .filter((l) => l.trim())
      .slice(-3)
      .join(" | "),
    240,
  );
}

function withTail(reason: string, tail: string): string {
  const last = stderrLines(tail);
  return last ? `${reason}; stderr: ${last}` : reason;
}

function stopFailure(cause: StopCause, p: ProcessOutcome): Failure {
  const reason =
    p.stopReason ??
    (cause === "interrupt" ? "interrupted: agentport was asked to stop and ended the agent" : `stopped by supervision (${cause})`);
  if (cause === "turns") return { kind: "turn_limit", message: reason };
  return { kind: "stopped", message: reason, cause };
}

/** What went wrong after the run started, deliverable aside: steps 5 to 9. */
function trouble(input: JudgeInput, cause: StopCause | null): Problem | null {
  const { agent, reduction: r, proc: p } = input;
  if (cause !== null && p.finishedAtStop !== true) return { status: STOP_STATUS[cause], failure: stopFailure(cause, p) };
  // Once agentport ended the process, the exit code and the signal are its own doing.
  const ours = p.stoppedBy !== null;
  const crashed = p.signal !== null && !ours;
  if (crashed) {
    const inner = r.failure === null ? "" : ` (${r.failure.message})`;
    return { status: "crashed", failure: failure("exited", withTail(`${agent}: killed by ${p.signal}${inner}`, p.stderrTail)) };
  }
  if (r.failure !== null) {
    const f = r.failure;
    const evidence = f.kind === "no_result" && !ours && p.exitCode !== null ? `exit code ${p.exitCode}` : "";
    // The agent's own spending limit (what --max-cost passes to claude) is a budget stop like the supervisor's.
    const status: Status = f.kind === "budget_limit" ? "over_budget" : "failed";
    return { status, failure: evidence ? { ...f, message: withTail(`${f.message} (${evidence})`, p.stderrTail) } : f };
  }
  if (!ours && p.exitCode !== null && p.exitCode !== 0) {
    const when = r.finished ? "after its result" : "without a result";
    return { status: "failed", failure: failure("exited", withTail(`${agent}: exited with code ${p.exitCode} ${when}`, p.stderrTail)) };
  }
  if (!r.finished) return { status: "failed", failure: failure("no_result", `${agent}: no result: the stream ended before the run did`) };
  return null;
}

function decision(
  input: JudgeInput,
  cause: StopCause | null,
): { status: Status; failure: Failure | null; envelope: Record<string, unknown> | null; warning: Failure | null } {
  const { agent, reduction: r, proc: p } = input;
  if (p.spawnError !== undefined) {
    return {
      status: "failed",
      failure: failure("environment", r.failure?.message ?? `${agent}: could not start (${p.spawnError})`),
      envelope: null,
      warning: null,
    };
  }
  if (p.stoppedBy === "internal") {
    return {
      status: "failed",
      failure: failure("internal", r.failure?.message ?? "agentport hit an internal error and ended the agent"),
      envelope: null,
      warning: null,
    };
  }
  const unmet = input.requirement ?? null;
  if (unmet !== null) return { status: "failed", failure: unmet, envelope: null, warning: null };
  const envelope = envelopeOf(input.envelope);
  const later = trouble(input, cause);
  if (envelope.ok && envelope.value !== null && input.envelope?.check) {
    return { status: "completed", failure: null, envelope: envelope.value, warning: later?.failure ?? null };
  }
  if (later !== null) return { status: later.status, failure: later.failure, envelope: null, warning: null };
  if (!envelope.ok) return { status: "failed", failure: envelope.failure, envelope: null, warning: null };
  const answered = (r.text ?? "").trim() !== "" || envelope.value !== null;
  if (!answered && r.toolCalls === 0) {
    return {
      status: "failed",
      failure: failure("empty_answer", `${agent}: the run completed with an empty answer (no text, no envelope, no tool call)`),
      envelope: null,
      warning: null,
    };
  }
  return { status: "completed", failure: null, envelope: envelope.value, warning: null };
}

export function judge(input: JudgeInput): Decided {
  const { agent, reduction: r, proc: p } = input;
  const cause = isStopCause(p.stoppedBy) ? p.stoppedBy : null;
  const refused = [...r.refused, ...(input.refused ?? [])];
  const decided = decision(input, cause);
  const refusalGate = decided.status === "completed" && input.failOnRefusal === true ? refusalFailure(refused) : null;
  const gate = refusalGate ?? (decided.status === "completed" && input.work !== undefined ? evidenceFailure(input.work) : null);
  const d = gate === null ? decided : { status: "failed" as const, failure: gate, envelope: null, warning: null };
  const fault = faultOf(input, d.status, d.failure, cause);
  // A quota wall is neither a failure to forget nor a retry: the run is parked until the limit resets.
  const parked = fault?.kind === "quota_wall";
  const status = parked ? "parked" : d.status;
  const ok = status === "completed";
  const summary: Summary = { ...r.summary, ...input.facts };
  if (p.exitCode !== null) summary.exit_code = p.exitCode;
  if (p.signal !== null) summary.signal = p.signal;
  if (p.stoppedBy !== null) summary.stopped_by = p.stoppedBy;
  if (ok && (r.text ?? "").trim() === "" && d.envelope === null) summary.empty_answer = true;
  // A run stopped before its end: the tokens are what was seen so far.
  if (cause !== null && r.tokens !== null && !r.finished) summary.tokens_partial = true;
  if (d.warning !== null) {
    summary.warning_kind = d.warning.kind;
    summary.warning = clean(secrets.diagnostic(d.warning.message), MAX_FAILURE_CHARS);
  }
  const version = input.agentVersion ?? (typeof r.summary.agent_version === "string" ? r.summary.agent_version : null);
  const tested = versionTested(agent, version);
  let told = d.failure;
  if (r.drift !== undefined) {
    summary.drift_unknown_types = r.drift.unknown.join(",");
    summary.drift_missing = r.drift.missing.join(",");
    const seen = r.drift.unknown.length > 0 ? `record types it does not know came (${r.drift.unknown.join(", ")}) and ` : "";
    const drifted = `version drift? ${agent} ${version ?? "(version unknown)"}${tested ? "" : ", outside the versions agentport was tested with"}: ${seen}${r.drift.missing.join(", ")} never did`;
    if (told !== null) told = { ...told, message: `${told.message}; ${drifted}` };
  }
  // The agent's error text and stderr can quote a key: redacted like fault evidence.
  const failed = told === null ? null : Object.freeze({ ...told, message: clean(secrets.diagnostic(told.message), MAX_FAILURE_CHARS) });
  const text = ok ? (r.text ?? (d.envelope === null ? null : JSON.stringify(d.envelope))) : null;
  const verdict: Verdict = {
    schema_version: SCHEMA_VERSION,
    agent,
    session_id: r.sessionId ?? input.sessionId ?? null,
    status,
    ok,
    text,
    envelope: d.envelope,
    failure: failed,
    stop_reason: r.stopReason,
    cost_micro_usd: r.costMicroUsd,
    cost_source: r.costMicroUsd === null ? "unknown" : r.costDerived === true ? "derived" : "reported",
    tokens: r.tokens === null ? null : Object.freeze({ ...r.tokens }),
    refused: Object.freeze(refused) as Refused[],
    env_fault: fault !== null && isEnvironmentFault(fault.kind),
    fault: fault === null ? null : Object.freeze({ ...fault }),
    changes: input.work?.observed.changes ?? null,
    resume_after: parked ? wallLifts(input, d.failure) : null,
    agent_version: version,
    agent_version_tested: tested,
    summary: Object.freeze(summary),
  };
  return { verdict: Object.freeze(verdict), fault };
}
