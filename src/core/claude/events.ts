// The records of `claude -p --output-format stream-json --verbose` (claude
// 2.1.197, ground truth §2-4), as the reducer reads them: a type-only union,
// no runtime cost. Every field is untrusted input, so it is `unknown` until
// the reducer checks it; the union names which records exist and which of
// their fields are read.

export type ClaudeRecord = ClaudeSystem | ClaudeAssistant | ClaudeUser | ClaudeResult | ClaudeRateLimit | { type: "stream_event" };

/** init opens a turn; api_retry, thinking_tokens, permission_denied, hooks and notices are the others. */
export interface ClaudeSystem {
  type: "system";
  subtype?: unknown;
  session_id?: unknown;
  model?: unknown;
  claude_code_version?: unknown;
  /** thinking_tokens */
  estimated_tokens?: unknown;
  /** api_retry */
  error?: unknown;
  attempt?: unknown;
  max_retries?: unknown;
  /** permission_denied */
  tool_use_id?: unknown;
  tool_name?: unknown;
}

/** `message.content` holds thinking, text and tool_use blocks; `message.id` and `message.usage` are one API response's. */
export interface ClaudeAssistant {
  type: "assistant";
  message?: unknown;
  /** Only on the synthetic record of a failed call. */
  error?: unknown;
}

/** `message.content` holds tool_result blocks. */
export interface ClaudeUser {
  type: "user";
  message?: unknown;
}

/** The end of a turn: read by result.ts. */
export interface ClaudeResult {
  type: "result";
  subtype?: unknown;
  is_error?: unknown;
  result?: unknown;
  errors?: unknown;
  stop_reason?: unknown;
  terminal_reason?: unknown;
  api_error_status?: unknown;
  session_id?: unknown;
  num_turns?: unknown;
  duration_ms?: unknown;
  total_cost_usd?: unknown;
  usage?: unknown;
  modelUsage?: unknown;
  permission_denials?: unknown;
}

export interface ClaudeRateLimit {
  type: "rate_limit_event";
  rate_limit_info?: unknown;
}
