// The records of `pi --mode json` (and of one RPC turn; pi 0.73.1 and 0.85,
// ground truth §2-3; pi-mono's rpc-types.ts), as the reducer reads them: a
// type-only union, no runtime cost. Every field is untrusted input, so it is
// `unknown` until the reducer checks it; the union names which records exist
// and which of their fields are read.

export type PiRecord =
  /** json mode's first line; inside an RPC stream after switch_session. */
  | { type: "session"; id?: unknown; cwd?: unknown }
  | { type: "message_end"; message?: unknown }
  | { type: "message_update"; assistantMessageEvent?: unknown }
  | { type: "tool_execution_start"; toolCallId?: unknown; toolName?: unknown; args?: unknown }
  | { type: "tool_execution_end"; toolCallId?: unknown; toolName?: unknown; result?: unknown; isError?: unknown }
  | { type: "auto_retry_start"; attempt?: unknown; maxAttempts?: unknown }
  | { type: "auto_retry_end"; success?: unknown }
  | { type: "compaction_end"; willRetry?: unknown }
  | { type: "entry_appended"; entry?: unknown }
  | {
      type:
        | "agent_start"
        | "agent_end"
        | "compaction_start"
        | "turn_start"
        | "turn_end"
        | "message_start"
        | "tool_execution_update"
        | "queue_update"
        | "thinking_level_changed"
        /** RPC: the end of a turn in pi >= 0.85. */
        | "agent_settled";
    };

/** An assistant message (message_end's `message` with role "assistant"). */
export interface PiAssistantMessage {
  role?: unknown;
  content?: unknown;
  stopReason?: unknown;
  errorMessage?: unknown;
  provider?: unknown;
  model?: unknown;
  /** input, output, cacheRead, cacheWrite, cost.total */
  usage?: unknown;
}
