// The records of `gemini -p --output-format stream-json`, as the reducer
// reads them: a type-only union, no runtime cost. Every field is untrusted
// input, so it is `unknown` until the reducer checks it; the union names
// which records exist and which of their fields are read.

export type GeminiRecord = GeminiInit | GeminiMessage | GeminiToolUse | GeminiToolResult | GeminiError | GeminiResult;

export interface GeminiInit {
  type: "init";
  session_id?: unknown;
  model?: unknown;
}

/** A delta of the model's reply (role "assistant") or the user's prompt echoed. */
export interface GeminiMessage {
  type: "message";
  role?: unknown;
  content?: unknown;
}

export interface GeminiToolUse {
  type: "tool_use";
  tool_name?: unknown;
  /** `<name>__<callId>`. */
  tool_id?: unknown;
  parameters?: unknown;
}

export interface GeminiToolResult {
  type: "tool_result";
  tool_id?: unknown;
  status?: unknown;
  output?: unknown;
  error?: unknown;
}

/** A non-fatal notice (an empty reply, a cut stream, a loop): the result decides. */
export interface GeminiError {
  type: "error";
  severity?: unknown;
  message?: unknown;
}

export interface GeminiResult {
  type: "result";
  status?: unknown;
  error?: unknown;
  stats?: unknown;
}
