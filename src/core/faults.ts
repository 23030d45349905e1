// Environment-fault classifier: does a run's failure point at the machine,
// the network or the provider rather than at the task? Pure and table-driven.
//
// Ask it only about a run that did not complete. A completed run is never an
// environment fault, however many 5xx or 429 its agent retried through.
//
// What counts. A 429, a quota, a 5xx or an overload that ENDED the run (the
// agent's own retries were exhausted, or it gave up) is an environment fault,
// exit 5: the provider failed, not the task, and the same run may well pass
// later. A 400 (invalid request), a missing model, max turns, an agent's own
// budget, a resume that found no conversation, or a bad flag is not: rerunning
// it unchanged fails the same way, so it stays exit 1.
//
// Sources, in order; the first hit wins:
//   1. spawnError: not_found → missing_binary; not_executable, spawn_failed → cannot_start.
//   2. `failure` (the agent's own failure: claude's result text, pi's
//      errorMessage, a reducer's reason), line by line, through FAULT_ROWS.
//   3. apiErrorStatus (claude's result.api_error_status): 401/403 auth, 402
//      quota, 408 timeout, 429 rate_limit, 529 overloaded, 5xx server_error.
//   4. stderrTail, newest line first, through FAULT_ROWS.
//   5. retryErrors (claude api_retry.error, or pi's errorMessage of the
//      attempt being retried), the last one, only when `failure` is null: the
//      agent was ended (timeout, stall, kill) while retrying.
//      With a failure of its own, an earlier retry is history, not the cause
//      (a max-turns failure after a recovered 529 is not "overloaded").
// The rows, and why they are in their order: fault-rows.ts.
//
// Pass the agent's failure, not agentport's own supervision text; the rows
// are nonetheless kept narrow enough that "timed out after 600 s; the agent's
// process group was killed" matches none (bare "timed out" is not a row: a
// tool's "Command timed out" is not the network's).
//
// claude's `startup_failure_reason` is not in claude 2.1.197 (neither in the
// captures nor in the bundle), so no row reads it.
import { secrets } from "./redact.ts";
import { clean, stripAnsi } from "./text.ts";
import { FAULT_ROWS, type FaultKind } from "./fault-rows.ts";

export interface Fault {
  kind: FaultKind;
  /** The matching line, ANSI-stripped, keys redacted, one line of at most 200 characters. */
  evidence: string;
}

export interface FaultInput {
  /** The last lines the agent wrote on stderr. */
  stderrTail: string;
  /** The agent's own failure, null when it reported none. */
  failure: string | null;
  /** claude's result.api_error_status. */
  apiErrorStatus?: number | null;
  /** claude's system/api_retry `error` categories, in order seen. */
  retryErrors?: string[];
  spawnError?: "not_found" | "not_executable" | "spawn_failed";
  /** The agent said, as a record, that its usage limit rejected the run (claude's rate_limit_event `rejected`). */
  wall?: boolean;
}

const MAX_EVIDENCE_CHARS = 200;
// A line is cut to this before any regex runs: a stderr tail is bounded, a failure may not be.
const MAX_LINE_CHARS = 2_000;

// -- evidence ------------------------------------------------------------------

/** A line as evidence: ANSI-stripped, redacted, one line of at most 200 characters. */
export function evidence(line: string): string {
  return clean(secrets.diagnostic(stripAnsi(line.slice(0, MAX_LINE_CHARS))), MAX_EVIDENCE_CHARS);
}

// -- classification ------------------------------------------------------------

/** The first row that matches `line`, or null. */
export function matchRow(line: string): FaultKind | null {
  const text = stripAnsi(line.slice(0, MAX_LINE_CHARS));
  for (const { kind, pattern } of FAULT_ROWS) if (pattern.test(text)) return kind;
  return null;
}

function scan(lines: string[]): Fault | null {
  for (const line of lines) {
    if (!line.trim()) continue;
    const kind = matchRow(line);
    if (kind !== null) return { kind, evidence: evidence(line) };
  }
  return null;
}

function fromStatus(code: number): FaultKind | null {
  if (code === 401 || code === 403) return "auth";
  if (code === 402) return "quota";
  if (code === 408) return "timeout";
  if (code === 429) return "rate_limit";
  if (code === 529) return "overloaded";
  if (code >= 500 && code <= 599) return "server_error";
  return null;
}

/** claude's api_retry / SDKAssistantMessageError categories that point at the environment. */
const RETRY_KINDS: ReadonlyMap<string, FaultKind> = new Map<string, FaultKind>([
  ["authentication_failed", "auth"],
  ["oauth_org_not_allowed", "auth"],
  ["account_on_hold", "auth"],
  ["verification_required", "auth"],
  ["cloud_credential_error", "auth"],
  ["billing_error", "quota"],
  ["rate_limit", "rate_limit"],
  ["overloaded", "overloaded"],
  ["server_error", "server_error"],
  // error_status null: a timeout or a lost connection (ground truth §3, §6).
  ["unknown", "network"],
]);

export function classifyFault(input: FaultInput): Fault | null {
  const failureLines = input.failure ? input.failure.split(/\r?\n/) : [];
  const firstFailure = failureLines.find((l) => l.trim()) ?? "";

  if (input.spawnError !== undefined) {
    const kind: FaultKind = input.spawnError === "not_found" ? "missing_binary" : "cannot_start";
    return { kind, evidence: firstFailure ? evidence(firstFailure) : `spawn: ${input.spawnError}` };
  }

  if (input.wall === true) return { kind: "quota_wall", evidence: firstFailure ? evidence(firstFailure) : "rate_limit_event rejected" };

  const fromFailure = scan(failureLines);
  if (fromFailure !== null) return fromFailure;

  const code = input.apiErrorStatus;
  if (typeof code === "number" && Number.isInteger(code)) {
    const kind = fromStatus(code);
    if (kind !== null) return { kind, evidence: firstFailure ? evidence(firstFailure) : `api_error_status ${code}` };
  }

  const fromStderr = scan(input.stderrTail.split(/\r?\n/).reverse());
  if (fromStderr !== null) return fromStderr;

  if (input.failure === null && input.retryErrors !== undefined && input.retryErrors.length > 0) {
    const last = input.retryErrors[input.retryErrors.length - 1] ?? "";
    const kind = RETRY_KINDS.get(last);
    if (kind !== undefined) return { kind, evidence: `api_retry error ${clean(last, 60)}` };
    // Not a claude category: pi's errorMessage of the attempt it was retrying ("429 …").
    return scan([last]);
  }
  return null;
}
