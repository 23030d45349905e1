// The pi RPC commands agentport sends (ground truth §4), as one typed union:
// a command's name fixes its fields. No process here.

export type RpcCommand =
  | { type: "prompt"; message: string }
  | { type: "abort" }
  /** Into the running turn: pi queues it and gives it to the model after the current step (its tool calls), before the next model call. */
  | { type: "steer"; message: string }
  | { type: "get_state" }
  | { type: "get_session_stats" }
  | { type: "get_messages" }
  | { type: "get_available_models" }
  | { type: "set_model"; provider: string; modelId: string }
  | { type: "set_thinking_level"; level: string }
  | { type: "clone" }
  | { type: "switch_session"; sessionPath: string };

export type RpcCommandType = RpcCommand["type"];
