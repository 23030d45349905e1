// pi's RPC protocol as the client sees it (ground truth §4-5): the messages,
// the values the client returns, and its one error type. No process here.
import { AgentportError } from "../core/errors.ts";
import type { Verdict } from "../core/verdict.ts";
import type { EnvelopeCheck } from "../core/envelope.ts";
import type { Json } from "../core/record.ts";
import type { Usage } from "../core/usage.ts";

export type { Json };

/** Extension UI methods that block pi until answered. The others (notify, setStatus, setWidget, …) are fire-and-forget. */
export const DIALOG_METHODS = new Set(["select", "confirm", "input", "editor"]);

export interface RpcSession {
  sessionId: string;
  sessionFile: string | null;
  reason: "start" | "fork" | "clone" | "switch";
  /** The session this one was cloned from (clone), else null. */
  parentId: string | null;
  /** The clone's or fork's source file, else null. */
  parentFile: string | null;
}

export interface RpcState {
  sessionId: string | null;
  sessionFile: string | null;
  /** `provider/id`. */
  model: string | null;
  thinkingLevel: string | null;
  isStreaming: boolean;
  messageCount: number | null;
  data: Json;
}

export interface PromptOptions {
  /** The envelope validator when an envelope is expected. */
  envelope?: ((value: unknown) => EnvelopeCheck) | null;
  requireExt?: string[];
  /** The route the observed model must match; default: the start model, or the last setModel. */
  route?: string | null;
}

export interface TurnResult {
  verdict: Verdict;
  exitCode: number;
  /** This turn's own tokens and cost: get_session_stats after minus before. */
  own: Usage;
  /** The current session's own usage so far: now minus when the client entered it (a clone: at clone). */
  session: Usage;
  sessionId: string | null;
  sessionFile: string | null;
  durationMs: number;
}

export interface CloneResult {
  sessionId: string;
  sessionFile: string | null;
  parentId: string | null;
  parentFile: string | null;
  /** Cumulative stats of the clone right after cloning (its copied history). */
  atClone: Usage;
}

export interface SessionUsage {
  sessionId: string | null;
  /** get_session_stats now (cloned history included). */
  total: Usage;
  /** When the client entered the session. */
  baseline: Usage;
  /** total minus baseline. */
  own: Usage;
}

export type PiRpcErrorCode = "exited" | "closed" | "command_failed" | "command_timeout" | "busy" | "cancelled";

/** A pi RPC command or session that failed: the agent's (errors.ts kind `agent`, exit 1). */
export class PiRpcError extends AgentportError {
  constructor(
    message: string,
    readonly code: PiRpcErrorCode,
    readonly details: {
      command?: string;
      response?: Json;
      exitCode?: number | null;
      signal?: string | null;
      stderrTail?: string;
      /** A turn pi died in: its verdict (failed or crashed; completed when its envelope had arrived). */
      verdict?: Verdict;
    } = {},
  ) {
    super("agent", message);
  }
}

/** One stdout line as a JSON object, or null (the turn's reducer counts what is not). */
export function parseMessage(text: string): Json | null {
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Json) : null;
  } catch {
    return null;
  }
}

const str = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null);

/** get_state's `data`, read. */
export function stateFrom(data: Json): RpcState {
  const model = data.model !== null && typeof data.model === "object" ? (data.model as Json) : {};
  return {
    sessionId: str(data.sessionId),
    sessionFile: str(data.sessionFile),
    model: str(model.provider) && str(model.id) ? `${String(model.provider)}/${String(model.id)}` : null,
    thinkingLevel: str(data.thinkingLevel),
    isStreaming: data.isStreaming === true,
    messageCount: typeof data.messageCount === "number" ? data.messageCount : null,
    data,
  };
}
