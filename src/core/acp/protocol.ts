// The Agent Client Protocol (ACP, protocol version 1) as agentport reads and
// writes it: JSON-RPC 2.0, one message per LF line. Types only: every value
// that arrives is checked where it is read (reducer.ts), never trusted to
// match these shapes.

export const ACP_PROTOCOL_VERSION = 1;

export type RpcId = number | string;

export interface RpcRequest<M extends string = string, P = unknown> {
  jsonrpc: "2.0";
  id: RpcId;
  method: M;
  params?: P;
}

export interface RpcNotification<M extends string = string, P = unknown> {
  jsonrpc: "2.0";
  method: M;
  params?: P;
}

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export type RpcResponse<R = unknown> = { jsonrpc: "2.0"; id: RpcId; result: R } | { jsonrpc: "2.0"; id: RpcId; error: RpcError };

/** One line, as the framer hands it to the reducer once parsed. */
export type RpcMessage = RpcRequest | RpcNotification | RpcResponse;

export const RPC_ERRORS = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
} as const;

// -- client → agent ------------------------------------------------------------

export interface ClientCapabilities {
  fs: { readTextFile: boolean; writeTextFile: boolean };
  terminal: boolean;
}

export interface InitializeParams {
  protocolVersion: number;
  clientCapabilities: ClientCapabilities;
  clientInfo: { name: string; version: string };
}

export interface NewSessionParams {
  cwd: string;
  mcpServers: [];
}

export interface LoadSessionParams extends NewSessionParams {
  sessionId: string;
}

export interface PromptParams {
  sessionId: string;
  prompt: { type: "text"; text: string }[];
}

export type ClientRequest =
  | RpcRequest<"initialize", InitializeParams>
  | RpcRequest<"session/new", NewSessionParams>
  | RpcRequest<"session/load", LoadSessionParams>
  | RpcRequest<"session/set_mode", { sessionId: string; modeId: string }>
  | RpcRequest<"session/prompt", PromptParams>;

export type ClientNotification = RpcNotification<"session/cancel", { sessionId: string }>;

// -- agent → client ------------------------------------------------------------

export interface InitializeResult {
  protocolVersion: number;
  agentInfo?: { name?: string; title?: string; version?: string };
  agentCapabilities?: { loadSession?: boolean; promptCapabilities?: Record<string, boolean>; mcpCapabilities?: Record<string, boolean> };
  authMethods?: { id: string; name: string }[];
}

export const STOP_REASONS = ["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"] as const;
export type StopReason = (typeof STOP_REASONS)[number];

export interface PromptResult {
  stopReason: StopReason;
  /** opencode: the prompt's tokens. */
  usage?: { inputTokens?: number; outputTokens?: number; totalTokens?: number; cachedReadTokens?: number; cachedWriteTokens?: number };
  /** gemini: `{quota: {token_count: {input_tokens, output_tokens}, model_usage: [...]}}`. */
  _meta?: Record<string, unknown>;
}

export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "switch_mode" | "other";
export type ToolStatus = "pending" | "in_progress" | "completed" | "failed";

export interface ToolCallFields {
  toolCallId: string;
  title?: string;
  kind?: ToolKind;
  status?: ToolStatus;
  locations?: { path: string; line?: number }[];
  rawInput?: unknown;
  content?: unknown[];
}

export type SessionUpdate =
  | { sessionUpdate: "agent_message_chunk"; content: { type: "text"; text: string } | { type: string } }
  | { sessionUpdate: "agent_thought_chunk"; content: { type: string; text?: string } }
  | { sessionUpdate: "user_message_chunk"; content: { type: string; text?: string } }
  | ({ sessionUpdate: "tool_call" } & ToolCallFields)
  | ({ sessionUpdate: "tool_call_update" } & ToolCallFields)
  | { sessionUpdate: "plan"; entries: { content: string; status: string; priority?: string }[] }
  | { sessionUpdate: "usage_update"; used?: number; size?: number; cost?: { amount: number; currency: string } }
  | { sessionUpdate: "available_commands_update" | "current_mode_update" | "config_option_update" | "session_info_update" };

export interface PermissionOption {
  optionId: string;
  name: string;
  kind: "allow_once" | "allow_always" | "reject_once" | "reject_always";
}

export interface RequestPermissionParams {
  sessionId: string;
  toolCall: ToolCallFields;
  options: PermissionOption[];
}

export type PermissionOutcome = { outcome: { outcome: "selected"; optionId: string } } | { outcome: { outcome: "cancelled" } };

export type AgentRequest =
  | RpcRequest<"session/request_permission", RequestPermissionParams>
  | RpcRequest<"fs/read_text_file", { sessionId: string; path: string; line?: number; limit?: number }>
  | RpcRequest<"fs/write_text_file", { sessionId: string; path: string; content: string }>;

export type AgentNotification = RpcNotification<"session/update", { sessionId: string; update: SessionUpdate }>;
