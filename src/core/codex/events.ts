// The records of `codex exec --json` (codex 0.169.0; codex-rs exec_events.rs),
// as the reducer reads them: a type-only union, no runtime cost. Every field
// is untrusted input, so it is `unknown` until the reducer checks it; the
// union names which records exist and which of their fields are read.

export type CodexRecord =
  | { type: "thread.started"; thread_id?: unknown }
  | { type: "turn.started" }
  | { type: "turn.completed"; usage?: unknown }
  | { type: "turn.failed"; error?: unknown }
  | { type: "item.started" | "item.updated" | "item.completed"; item?: unknown }
  /** A retry notice ("Reconnecting... 1/2 (why)") or the final error before turn.failed. */
  | { type: "error"; message?: unknown };

/** turn.completed's usage: the thread's running total. */
export interface CodexUsage {
  input_tokens?: unknown;
  cached_input_tokens?: unknown;
  cache_write_input_tokens?: unknown;
  output_tokens?: unknown;
  reasoning_output_tokens?: unknown;
}

/** An item of item.started / item.completed; tool items are command_execution, file_change, mcp_tool_call, web_search. */
export type CodexItem =
  | { type: "agent_message"; id?: unknown; text?: unknown }
  | { type: "reasoning"; id?: unknown }
  /** A warning (unknown model metadata, …): the run goes on. */
  | { type: "error"; id?: unknown; message?: unknown }
  | { type: "command_execution"; id?: unknown; command?: unknown; status?: unknown; exit_code?: unknown; aggregated_output?: unknown }
  | { type: "file_change"; id?: unknown; changes?: unknown; status?: unknown }
  | { type: "mcp_tool_call" | "web_search"; id?: unknown; status?: unknown };
