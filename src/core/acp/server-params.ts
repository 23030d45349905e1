// The params of the ACP server's session methods, checked before the host sees
// them: an absolute cwd and no MCP servers for session/new and session/load, a
// known and idle session and a prompt of text for session/prompt. Pure.
import { objectOf, type Json } from "../record.ts";
import { clean } from "../text.ts";
import { RPC_ERRORS, type RpcError } from "./protocol.ts";

/** The longest prompt taken, in characters (the framer bounds the line; this bounds what is handed on). */
export const MAX_PROMPT_CHARS = 1024 * 1024;

/** The methods served after initialize. */
export const KNOWN_METHODS: ReadonlySet<string> = new Set(["session/new", "session/load", "session/prompt"]);

/** A method's params as the host takes them ("" where the method has none). */
export interface Checked {
  cwd: string;
  sessionId: string;
  text: string;
}

const invalid = (message: string): { ok: false; error: RpcError } => ({
  ok: false,
  error: { code: RPC_ERRORS.invalidParams, message: `invalid params: ${message}` },
});

/** The params a method needs, checked: an absolute cwd, a known and idle session, a prompt of text. */
export function checkParams(
  method: string,
  params: Json,
  sessions: ReadonlySet<string>,
  busy: ReadonlySet<string>,
): { ok: true; value: Checked } | { ok: false; error: RpcError } {
  const cwd = typeof params.cwd === "string" ? params.cwd : "";
  const sessionId = typeof params.sessionId === "string" ? params.sessionId : "";
  if (method === "session/new" || method === "session/load") {
    if (!cwd.startsWith("/") || cwd.length > 4096 || cwd.includes("\0")) return invalid(`${method} needs cwd, an absolute path`);
    if (method === "session/load" && (sessionId === "" || sessionId.length > 200))
      return invalid("session/load needs the sessionId to load");
    // Refused, not dropped: the agent behind would run without the servers the client counts on.
    if (Array.isArray(params.mcpServers) && params.mcpServers.length > 0)
      return invalid(
        "agentport acp passes no MCP servers to the agent; configure them in the agent's own settings and send mcpServers: []",
      );
    return { ok: true, value: { cwd, sessionId, text: "" } };
  }
  if (!sessions.has(sessionId))
    return invalid(`no session "${clean(sessionId, 80)}" on this connection; create one with session/new or session/load`);
  if (busy.has(sessionId))
    return {
      ok: false,
      error: {
        code: RPC_ERRORS.invalidRequest,
        message: `invalid request: session ${sessionId} is still answering a prompt; wait for it, or send session/cancel`,
      },
    };
  const text = promptText(params.prompt);
  if (text === null) return invalid("session/prompt needs prompt, a list of content blocks with some text (type text or resource_link)");
  if (text.length > MAX_PROMPT_CHARS) return invalid(`the prompt is over ${MAX_PROMPT_CHARS} characters`);
  return { ok: true, value: { cwd: "", sessionId, text } };
}

/** The prompt's text: its text blocks, and each resource link as its URI, one per line; null when there is no text. */
function promptText(prompt: unknown): string | null {
  if (!Array.isArray(prompt)) return null;
  const parts: string[] = [];
  for (const block of prompt) {
    const b = objectOf(block);
    if (b?.type === "text" && typeof b.text === "string") parts.push(b.text);
    else if (b?.type === "resource_link" && typeof b.uri === "string") parts.push(b.uri);
  }
  const text = parts.join("\n");
  return text.trim() === "" ? null : text;
}
