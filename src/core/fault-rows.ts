// The fault rows: each kind of environment fault and the patterns of a
// failure line that name it, in the order they are tried (faults.ts reads them). Pure data.
//
// Within one line, the first row of FAULT_ROWS that matches wins. Row order:
// missing_binary, cannot_start, dns, timeout, network, auth, quota_wall, Google's
// retried 429, quota, rate_limit, overloaded, server_error. dns and timeout come before
// network because claude wraps the errno in a network phrase ("Unable to connect to
// API (ENOTFOUND)"); quota before rate_limit because quota errors come as 429s;
// overloaded before server_error because 529 is a 5xx.

export const FAULT_KINDS = [
  "missing_binary",
  "cannot_start",
  "auth",
  /** A usage limit that resets later (claude's session limit, codex's usage limit, gemini's daily quota): the run is parked. */
  "quota_wall",
  "quota",
  "rate_limit",
  "overloaded",
  "server_error",
  "network",
  "dns",
  "timeout",
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultRow {
  kind: FaultKind;
  pattern: RegExp;
}

/**
 * An HTTP status where it reads as one: after "API Error:", "status",
 * "HTTP", "code", at the start of a line (pi's errorMessage is
 * "<status> <message>"), or after ": " / " | " (pi's failure is "pi: stopped
 * on error: <errorMessage>"). Not after a bare colon, so the port in
 * 127.0.0.1:500 is no status, and not before a unit ("delay: 500 ms").
 */
function status(codes: string): string {
  const before = String.raw`(?:^|[:|]\s+|API Error:?\s*|HTTP(?:\/[\d.]+)?\s+|status(?:[ _-]?code)?["']?[:=]?\s*|\bcode["']?[:=]?\s*)`;
  const unit = String.raw`(?!\s*(?:(?:ms|s|sec|secs|seconds|m|min|minutes|bytes|[kmg]b|tokens|lines|files)\b|%))`;
  return String.raw`${before}(?:${codes})\b${unit}`;
}

function row(kind: FaultKind, ...parts: string[]): FaultRow {
  return { kind, pattern: new RegExp(parts.join("|"), "i") };
}

/** The rows, in the order they are tried on each line. */
export const FAULT_ROWS: readonly FaultRow[] = [
  // The agent was found but its interpreter (#!/usr/bin/env node) was not; or it cannot run here.
  row("missing_binary", String.raw`\benv: ['‘"]?[\w.\-]+['’"]?: No such file or directory`, String.raw`\bcommand not found\b`),
  row(
    "cannot_start",
    String.raw`exec format error`,
    String.raw`\bENOEXEC\b`,
    String.raw`error while loading shared libraries`,
    String.raw`\bGLIBC_[\d.]+'? not found`,
  ),
  // Before network: claude prints "Unable to connect to API (ENOTFOUND)".
  row(
    "dns",
    String.raw`\bENOTFOUND\b`,
    String.raw`\bEAI_AGAIN\b`,
    String.raw`\bgetaddrinfo\b`,
    String.raw`could not resolve host`,
    String.raw`temporary failure in name resolution`,
    String.raw`name or service not known`,
  ),
  // Before network, for the same reason: "Unable to connect to API (ETIMEDOUT)".
  row(
    "timeout",
    String.raw`\bE(?:SOCKET)?TIMEDOUT\b`,
    String.raw`\brequest timed out\b`,
    String.raw`\b(?:connection|connect|socket|read|operation|headers) (?:timed out|timeout)\b`,
    String.raw`\btimed out (?:while|waiting for|connecting)\b`,
    String.raw`aborted due to timeout`,
    status("408"),
    String.raw`\b408 Request Time-?out\b`,
  ),
  row(
    "network",
    String.raw`\bECONNREFUSED\b`,
    String.raw`connection refused`,
    String.raw`\bECONNRESET\b`,
    String.raw`connection reset`,
    String.raw`socket hang up`,
    String.raw`fetch failed`,
    String.raw`\bE(?:NETUNREACH|HOSTUNREACH|NETDOWN)\b`,
    String.raw`network (?:error|is unreachable)`,
    String.raw`unable to connect to (?:the )?API`,
    String.raw`\bconnection error\b`,
    // codex: "Reconnecting... waiting for network (Connection failed: error sending request)".
    String.raw`\bconnection failed\b`,
    String.raw`other side closed`,
    String.raw`socket connection was closed unexpectedly`,
    String.raw`certificate has expired|self[- ]signed certificate|UNABLE_TO_VERIFY_LEAF_SIGNATURE|\bCERT_HAS_EXPIRED\b`,
  ),
  row(
    "auth",
    status("401|403"),
    String.raw`\b40[13] (?:Unauthorized|Forbidden)\b`,
    String.raw`invalid (?:x-)?api[ _-]?key`,
    String.raw`\bauthentication_(?:failed|error)\b`,
    String.raw`authentication failed|failed to authenticate`,
    String.raw`\boauth_org_not_allowed\b`,
    String.raw`oauth token has (?:been revoked|expired)`,
    String.raw`\bno api key\b`,
    String.raw`\bnot logged in\b`,
    String.raw`please run /login`,
    String.raw`\bpermission_error\b`,
    String.raw`\b(?:account_on_hold|verification_required|cloud_credential_error)\b`,
    String.raw`organization has been disabled`,
  ),
  // Before quota and rate_limit: a usage limit that resets later (see test/fixtures/<agent>/quota-wall*).
  row(
    "quota_wall",
    // claude: "You've hit your session limit · resets 10:10pm (UTC)"; codex: "You’ve hit your usage limit. … try again in 2 days …"
    // (codex 0.169.0 prints the typographic apostrophe, test/e2e-quota-wall.test.ts).
    String.raw`you['’]ve hit your (?:(?!spend\b)\w+ ){0,4}limit`,
    // codex's error event and pi's relay of it; claude's older "Claude AI usage limit reached|<epoch>"; opencode's "The usage limit has been reached".
    String.raw`\busage[_ ]limit(?:[_ ]has been)?[_ ]reached\b`,
    String.raw`\b\d+-hour limit reached`,
    // gemini: TerminalQuotaError "You have exhausted your daily quota on this model.", "… Your quota will reset after 2h…".
    String.raw`\bTerminalQuotaError\b`,
    String.raw`exhausted your (?:daily )?(?:quota|capacity)`,
    String.raw`quota will reset`,
    String.raw`expected quota reset`,
    // opencode's free tier: 429 {"type":"FreeUsageLimitError"}, "Free usage exceeded, subscribe to Go".
    String.raw`\bFreeUsageLimitError\b`,
    String.raw`free usage exceeded`,
  ),
  // Before quota: Google's text for a 429 it lets gemini retry ("Resource has been exhausted (e.g. check quota).")
  // names a quota only as an example; gemini words a spent quota otherwise ("You have exhausted your daily quota").
  row("rate_limit", String.raw`resource has been exhausted`),
  // Before rate_limit: OpenAI's insufficient_quota and Gemini's quota come as 429s.
  row(
    "quota",
    status("402"),
    String.raw`\bbilling_error\b`,
    String.raw`credit balance`,
    String.raw`\binsufficient_quota\b`,
    String.raw`\bquota\b`,
    String.raw`payment required`,
    String.raw`out of usage credits`,
    String.raw`spend limit reached`,
    // A spend cap the user set is billing, not a wall that lifts by itself.
    String.raw`you've hit your (?:\w+ ){0,3}spend limit`,
  ),
  row("rate_limit", status("429"), String.raw`too many requests`, String.raw`\brate[_ -]?limit`, String.raw`\bRESOURCE_EXHAUSTED\b`),
  // Before server_error: 529 is a 5xx.
  row(
    "overloaded",
    status("529"),
    String.raw`overloaded`,
    String.raw`repeated 529`,
    String.raw`API is at capacity`,
    String.raw`experiencing high load`,
  ),
  row(
    "server_error",
    status("5\\d\\d"),
    String.raw`\bserver_error\b`,
    String.raw`internal server error`,
    String.raw`bad gateway`,
    String.raw`service unavailable`,
    String.raw`gateway time-?out`,
    String.raw`upstream connect error`,
  ),
];
