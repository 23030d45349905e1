// The ACP client: one phase of a session with any ACP agent, as a reducer the
// framer feeds one JSON-RPC message a line. It writes its own requests through
// `write` (initialize, session/new or session/load, session/prompt), answers
// the agent's requests at once (permissions by the policy, anything else
// "method not found": it offers no client method), and turns every session/update into
// progress. The prompt's response is the run's end; its stopReason the
// verdict's. It never starts a process, reads a clock or knows a CLI flag.
import type { PermissionMode } from "../agents.ts";
import type { FailureKind } from "../failure.ts";
import type { LoopObserver } from "../loop.ts";
import type { Price } from "../prices.ts";
import { withRunning, type ProgressEvent, type ProgressSink } from "../progress.ts";
import type { Json } from "../record.ts";
import { MAX_REASON_CHARS, MAX_REFUSED, MAX_VALUE_CHARS, type Reducer, type Reduction, type Summary } from "../reduction.ts";
import { clean } from "../text.ts";
import type { Refused, Tokens } from "../verdict.ts";
import { decidePermission, howToAllow, permissionOutcome } from "./permission.ts";
import { ACP_PROTOCOL_VERSION, RPC_ERRORS, type ClientCapabilities, type PermissionOption, type RpcError, type RpcId } from "./protocol.ts";
import { AcpTools } from "./tools.ts";
import { AcpUsage } from "./usage.ts";

export interface AcpClientOptions {
  cwd: string;
  prompt: string;
  /** The agent's own session id, once session/new gave it. */
  onSession?: (agentSessionId: string) => void;
  /** Every permission answer, for the run folder. */
  recordAnswer?: (answer: Json) => void;
  emit?: ProgressSink;
  loop?: LoopObserver;
  permissionMode?: PermissionMode;
  /** The agent's session to load (a resume); else a new one. */
  loadSessionId?: string;
  price?: Price | null;
  earlierCostMicroUsd?: number;
  clientVersion?: string;
}

type Stage = "start" | "initialize" | "session" | "prompt" | "done";
const REQUEST = { initialize: 1, session: 2, prompt: 3 } as const;
const MAX_TEXT_CHARS = 4 * 1024 * 1024;
const STOP_FAILURES: Readonly<Record<string, { kind: FailureKind; why: string }>> = {
  max_tokens: { kind: "token_limit", why: "the model reached its output token limit" },
  max_turn_requests: { kind: "turn_limit", why: "the agent reached its limit of model requests in one turn" },
  refusal: { kind: "agent_error", why: "the agent refused to go on" },
};

const obj = (value: unknown): Json | null => (value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : null);

export class AcpClient implements Reducer {
  private stage: Stage = "start";
  private sessionId: string | null = null;
  private stopReason: string | null = null;
  private failure: { kind: FailureKind; message: string } | null = null;
  private cancelSent = false;
  private text = "";
  private chunks = 0;
  private thinking = false;
  private readonly refused: Refused[] = [];
  private readonly tools: AcpTools;
  private readonly usage: AcpUsage;
  private readonly counts = { records: 0, oversize_records: 0, unknown_methods: 0, stray_responses: 0, early_messages: 0, other_session_updates: 0, plan_updates: 0, permission_requests: 0, permissions_allowed: 0, refused_requests: 0 };
  private readonly agent: Summary = {};
  private write: (message: Json) => void = () => {};

  constructor(private readonly options: AcpClientOptions) {
    this.tools = new AcpTools(options.cwd, (event) => this.send(event), options.loop);
    this.usage = new AcpUsage(options.price ?? null, options.earlierCostMicroUsd ?? 0);
  }

  /**
   * What the client offers: nothing. Measured with gemini 0.61.0: a client that
   * offers fs gets the agent's writes through fs/write_text_file without any
   * session/request_permission (the policy would never be asked), and a new
   * file's write fails on gemini's check of the missing file.
   */
  capabilities(): ClientCapabilities {
    return { fs: { readTextFile: false, writeTextFile: false }, terminal: false };
  }

  /** Opens the conversation: `initialize`; every message to the agent goes through `write` (a line of JSON). */
  start(write: (message: Json) => void): void {
    if (this.stage !== "start") return;
    this.write = write;
    this.stage = "initialize";
    this.request(REQUEST.initialize, "initialize", { protocolVersion: ACP_PROTOCOL_VERSION, clientCapabilities: this.capabilities(), clientInfo: { name: "agentport", version: this.options.clientVersion ?? "0" } });
  }

  /** Supervision wants the run to end: `session/cancel` when a prompt is open (true), else nothing to ask (false). */
  cancel(): boolean {
    if (this.stage !== "prompt" || this.sessionId === null || this.cancelSent) return this.cancelSent;
    this.cancelSent = true;
    this.write({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: this.sessionId } });
    return true;
  }

  /** Nothing more will be asked: the prompt answered, or the conversation failed. */
  over(): boolean {
    return this.stage === "done" || this.failure !== null;
  }

  // -- LineSink ------------------------------------------------------------------

  line(text: string): void {
    this.counts.records += 1;
    if (this.over()) return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.fail("protocol", "acp: protocol violation: a stdout line is not JSON");
      return;
    }
    const message = obj(value);
    if (message === null || message.jsonrpc !== "2.0") {
      this.fail("protocol", "acp: protocol violation: a stdout line is not a JSON-RPC 2.0 message");
      return;
    }
    this.message(message);
  }

  oversize(_limit: number): void {
    this.counts.oversize_records += 1;
    this.send({ kind: "activity" });
  }

  framingError(what: string): void {
    this.fail("protocol", `acp: protocol violation: ${what}`);
  }

  unterminated(text: string): void {
    this.line(text);
  }

  streamEnded(): void {
    if (this.stage === "done" || this.failure !== null) return;
    this.fail("no_result", this.stage === "prompt" ? "acp: the agent's output ended before the prompt's response" : `acp: the agent's output ended during ${this.stage === "session" ? "session setup" : "initialize"}`);
  }

  // -- Reducer -------------------------------------------------------------------

  finished(): boolean {
    return this.stopReason !== null;
  }

  liveTokens(): Tokens | null {
    return this.usage.tokens;
  }

  liveCost(): number | null {
    return this.usage.cost();
  }

  reduction(): Reduction {
    const summary: Summary = { ...this.counts, ...this.agent, text_chunks: this.chunks, tool_calls: this.tools.calls, tool_errors: this.tools.failed, cost_source: this.usage.source() };
    if (this.cancelSent) summary.cancel_sent = true;
    if (this.usage.contextUsed !== undefined) summary.context_used = this.usage.contextUsed;
    if (this.usage.contextSize !== undefined) summary.context_size = this.usage.contextSize;
    const completed = this.failure === null && this.stopReason === "end_turn";
    return {
      text: completed ? this.text : null,
      failure: this.failure,
      finished: this.stopReason !== null,
      toolCalls: this.tools.calls,
      pendingRetryError: null,
      sessionId: null,
      model: this.usage.model,
      stopReason: this.stopReason,
      costMicroUsd: this.usage.cost(),
      tokens: this.usage.tokens,
      refused: [...this.refused],
      summary,
    };
  }

  /** The agent's own session id (session/new's answer, or the one loaded). */
  agentSessionId(): string | null {
    return this.sessionId;
  }

  // -- messages ------------------------------------------------------------------

  private message(message: Json): void {
    const method = typeof message.method === "string" ? message.method : null;
    const hasId = typeof message.id === "number" || typeof message.id === "string";
    if (method === null) {
      if (hasId) this.response(message.id as RpcId, message);
      else this.counts.stray_responses += 1;
      return;
    }
    const params = obj(message.params) ?? {};
    if (hasId) this.agentRequest(message.id as RpcId, method, params);
    else this.notification(method, params);
  }

  private response(id: RpcId, message: Json): void {
    const expected = this.stage === "initialize" ? REQUEST.initialize : this.stage === "session" ? REQUEST.session : this.stage === "prompt" ? REQUEST.prompt : null;
    if (id !== expected) {
      this.counts.stray_responses += 1;
      return;
    }
    const error = obj(message.error);
    if (error !== null) {
      this.rpcFailure(error);
      return;
    }
    const result = obj(message.result) ?? {};
    if (this.stage === "initialize") this.initialized(result);
    else if (this.stage === "session") this.sessionReady(result);
    else this.promptAnswered(result);
  }

  private initialized(result: Json): void {
    const info = obj(result.agentInfo) ?? {};
    const caps = obj(result.agentCapabilities) ?? {};
    this.agent.agent_name = clean(info.name, MAX_VALUE_CHARS);
    this.agent.agent_version = clean(info.version, MAX_VALUE_CHARS);
    this.agent.protocol_version = typeof result.protocolVersion === "number" ? result.protocolVersion : 0;
    const prompt = Object.entries(obj(caps.promptCapabilities) ?? {}).filter(([, v]) => v === true).map(([k]) => k);
    const names = [...(caps.loadSession === true ? ["loadSession"] : []), ...prompt];
    this.agent.agent_capabilities = clean(names.join(","), MAX_VALUE_CHARS);
    if (result.protocolVersion !== ACP_PROTOCOL_VERSION) {
      this.fail("agent_error", `acp: the agent speaks protocol version ${clean(String(result.protocolVersion), 20)}, agentport speaks ${ACP_PROTOCOL_VERSION}`);
      return;
    }
    this.stage = "session";
    const load = this.options.loadSessionId;
    if (load === undefined) {
      this.request(REQUEST.session, "session/new", { cwd: this.options.cwd, mcpServers: [] });
      return;
    }
    if (caps.loadSession !== true) {
      this.fail("refused", `acp: ${this.agent.agent_name || "the agent"} does not advertise loadSession: its sessions cannot be resumed; start a new one with agentport run`);
      return;
    }
    this.sessionId = load;
    this.request(REQUEST.session, "session/load", { sessionId: load, cwd: this.options.cwd, mcpServers: [] });
  }

  private sessionReady(result: Json): void {
    if (this.sessionId === null) {
      const id = clean(result.sessionId, MAX_VALUE_CHARS);
      if (!id) {
        this.fail("protocol", "acp: protocol violation: session/new answered without a sessionId");
        return;
      }
      this.sessionId = id;
      this.options.onSession?.(id);
    }
    this.stage = "prompt";
    this.send({ kind: "started" });
    this.request(REQUEST.prompt, "session/prompt", { sessionId: this.sessionId, prompt: [{ type: "text", text: this.options.prompt }] });
  }

  private promptAnswered(result: Json): void {
    this.stage = "done";
    this.usage.result(result);
    const reason = clean(result.stopReason, 40) || "unknown";
    this.stopReason = reason;
    this.send({ kind: "activity" });
    if (reason === "end_turn") {
      this.options.loop?.turn();
      return;
    }
    if (reason === "cancelled") {
      if (!this.cancelSent) this.fail("agent_error", "acp: the agent cancelled the prompt though agentport did not ask it to");
      return;
    }
    const known = STOP_FAILURES[reason];
    this.fail(known?.kind ?? "protocol", known ? `acp: ${known.why} (stopReason ${reason})` : `acp: protocol violation: unknown stopReason "${reason}"`);
  }

  private rpcFailure(error: Json): void {
    const code = typeof error.code === "number" && Number.isSafeInteger(error.code) ? error.code : 0;
    const data = obj(error.data);
    const detail = clean(data?.details ?? data?.message, MAX_VALUE_CHARS);
    const what = `${clean(error.message, MAX_VALUE_CHARS * 2)}${detail ? ` (${detail})` : ""}`;
    if (code >= 400 && code < 600) this.agent.api_error_status = code;
    const step = this.stage === "prompt" ? "the prompt" : this.stage === "session" ? (this.options.loadSessionId ? "session/load" : "session/new") : "initialize";
    this.fail(this.stage === "prompt" ? "provider_error" : "agent_error", `acp: ${step} failed: error ${code}: ${what}`);
  }

  private notification(method: string, params: Json): void {
    if (method !== "session/update") {
      this.counts.unknown_methods += 1;
      return;
    }
    if (this.sessionId === null) {
      this.counts.early_messages += 1;
      return;
    }
    if (params.sessionId !== this.sessionId) {
      this.counts.other_session_updates += 1;
      return;
    }
    this.update(obj(params.update) ?? {});
  }

  private update(update: Json): void {
    const kind = update.sessionUpdate;
    if (kind !== "agent_thought_chunk") this.thinking = false;
    switch (kind) {
      case "agent_message_chunk": {
        const content = obj(update.content);
        if (content?.type !== "text" || typeof content.text !== "string") return;
        this.send({ kind: this.chunks === 0 ? "assistant_text" : "activity" });
        this.chunks += 1;
        if (this.text.length < MAX_TEXT_CHARS) this.text += content.text.slice(0, MAX_TEXT_CHARS - this.text.length);
        return;
      }
      case "agent_thought_chunk":
        if (!this.thinking) this.send({ kind: "thinking" });
        this.thinking = true;
        return;
      case "tool_call":
      case "tool_call_update":
        // Text after a tool call is a new reply: the final text is the last one's.
        if (kind === "tool_call") this.text = "";
        this.tools.observe(update);
        return;
      case "plan":
        this.counts.plan_updates += 1;
        this.send({ kind: "activity", detail: `plan: ${Array.isArray(update.entries) ? update.entries.length : 0} entries` });
        return;
      case "usage_update":
        this.usage.update(update);
        this.send({ kind: "activity" });
        return;
      default:
        this.send({ kind: "activity" });
    }
  }

  private agentRequest(id: RpcId, method: string, params: Json): void {
    if (this.stage === "start" || this.stage === "initialize") {
      this.counts.early_messages += 1;
      this.reply(id, null, { code: RPC_ERRORS.invalidRequest, message: "the session is not set up yet" });
      return;
    }
    switch (method) {
      case "session/request_permission":
        this.permission(id, params);
        return;
      default:
        this.counts.unknown_methods += 1;
        this.reply(id, null, { code: RPC_ERRORS.methodNotFound, message: `agentport does not serve ${clean(method, 60)}` });
    }
  }

  private permission(id: RpcId, params: Json): void {
    this.counts.permission_requests += 1;
    const call = obj(params.toolCall) ?? {};
    const kind = AcpTools.kindOf(call.kind);
    this.tools.observe({ ...call, status: undefined });
    const options = (Array.isArray(params.options) ? params.options : []).map(obj).filter((o): o is Json => o !== null) as unknown as PermissionOption[];
    const decision = decidePermission(this.options.permissionMode, kind);
    const outcome = permissionOutcome(decision, options);
    this.reply(id, outcome, null);
    this.options.recordAnswer?.({ method: "session/request_permission", kind, path: this.tools.detailOf(call), decision, outcome: outcome.outcome });
    if (decision === "allow") {
      this.counts.permissions_allowed += 1;
      return;
    }
    this.tools.close(call.toolCallId);
    this.counts.refused_requests += 1;
    const detail = this.tools.detailOf(call);
    if (this.refused.length < MAX_REFUSED) this.refused.push({ kind: "permission", subject: clean(`${kind}${detail ? ` ${detail}` : ""}: rejected; allow it with ${howToAllow(kind)}`, MAX_REASON_CHARS) });
  }

  // -- output --------------------------------------------------------------------

  private request(id: number, method: string, params: Json): void {
    this.write({ jsonrpc: "2.0", id, method, params });
  }

  private reply(id: RpcId, result: unknown, error: RpcError | null): void {
    this.write(error === null ? { jsonrpc: "2.0", id, result } : { jsonrpc: "2.0", id, error });
  }

  private send(event: ProgressEvent): void {
    this.options.emit?.(withRunning(event, this));
  }

  private fail(kind: FailureKind, message: string): void {
    if (this.failure !== null) return;
    this.failure = { kind, message: clean(message, MAX_REASON_CHARS) };
  }
}
