// Typed failures: what went wrong with a run, as a kind the judge, the nudges,
// bon and the exit code switch on, plus one bounded line for people. The kind
// list and the stop causes live here and only here; add a kind to the list
// (and, for a stop cause, its status to STOP_STATUS in verdict.ts).

export const FAILURE_KINDS = [
  /** The stream ended without the run's result (no result record, no agent_end, stdout closed early). */
  "no_result",
  /** The stream broke the agent's protocol (a malformed record, invalid UTF-8, an unparsable tail). */
  "protocol",
  /** An envelope was required and none was delivered. */
  "envelope_missing",
  /** An envelope was delivered and does not match the schema. */
  "envelope_invalid",
  /** The model provider failed the run (an API error, retries exhausted). */
  "provider_error",
  /** The agent ended its own run in error (max turns, its own budget, an abort of its own, a missing conversation). */
  "agent_error",
  /** A completed run with no text, no envelope and no tool call. */
  "empty_answer",
  /** The process exited non-zero or was killed by a signal agentport did not send. */
  "exited",
  /** agentport stopped the run (see `cause`). */
  "stopped",
  /** Refused before any process started (a resume outside its birth folder). */
  "refused",
  /** The agent could not be started here (not found, not executable). */
  "environment",
  /** A required extension was not proven loaded. */
  "extension_missing",
  /** The model that answered is not the one requested. */
  "model_mismatch",
  /** agentport itself failed. */
  "internal",
  /** The run reached --max-turns before it finished (claude's error_max_turns; pi: agentport stopped it; ACP: stopReason max_turn_requests). */
  "turn_limit",
  /** The model stopped at its output token limit (ACP: stopReason max_tokens). */
  "token_limit",
  /** The command line or its input was wrong (exit 2): nothing started. */
  "usage",
  /** The run completed with refused requests, and --fail-on-refusal makes that a failure. */
  "refusals",
  /** The agent stopped itself at its own spending limit (claude's --max-budget-usd, what --max-cost passes). */
  "budget_limit",
  /** The run completed without changing its folder, and --expect-change asked for a change. */
  "no_change",
  /** The run completed without writing a file --expect-file named. */
  "missing_file",
] as const;
export type FailureKind = (typeof FAILURE_KINDS)[number];

/** Why agentport stopped a run. */
/** `wall`: the agent was retrying a usage limit that resets later (a quota wall): parked at once. */
export const STOP_CAUSES = ["timeout", "stall", "loop", "budget", "cost", "turns", "interrupt", "wall"] as const;
export type StopCause = (typeof STOP_CAUSES)[number];

export interface Failure {
  kind: FailureKind;
  /** One bounded, redacted line. */
  message: string;
  /** Only for kind "stopped". */
  cause?: StopCause;
}

export function failure(kind: FailureKind, message: string): Failure {
  return { kind, message };
}

export function isStopCause(value: unknown): value is StopCause {
  return (STOP_CAUSES as readonly unknown[]).includes(value);
}

/** The envelope is all that is wrong: a nudge may fix it. */
export function isEnvelopeFailure(f: Failure | null): boolean {
  return f !== null && (f.kind === "envelope_missing" || f.kind === "envelope_invalid");
}
