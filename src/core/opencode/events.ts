// The records of opencode's two streams, as the reducers read them: a
// type-only union each, no runtime cost. Every field is untrusted input, so it
// is `unknown` until a reducer checks it; the unions name which records exist
// and which of their fields are read. Both streams carry the same message
// parts (common.ts).

/** `opencode run --format json`: one record a line, each naming its session. */
export type OpencodeRecord =
  | { type: "step_start" | "text" | "reasoning" | "tool_use" | "step_finish"; sessionID?: unknown; part?: unknown }
  | { type: "error"; sessionID?: unknown; error?: unknown };

/** `opencode serve`'s event stream (SSE): `properties` holds the session and the payload. */
export type OpencodeServeEvent = {
  type:
    | "message.updated"
    | "message.part.updated"
    | "message.part.delta"
    | "session.status"
    | "session.error"
    | "session.idle"
    | "permission.asked"
    | "permission.replied";
  properties?: unknown;
};
