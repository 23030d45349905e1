// The ACP client: one phase of a session with any ACP agent, as a reducer the
// framer feeds one JSON-RPC message a line. It writes its own requests through
// `write` (initialize, session/new or session/load, session/prompt), answers
// the agent's requests at once (permissions by the policy, anything else
// "method not found": it offers no client method), and turns every session/update into
// progress. The prompt's response is the run's end; its stopReason the
// verdict's. It never starts a process, reads a clock or knows a CLI flag.
import type { FailureKind } from "../failure.ts";
import { withRunning, type ProgressEvent } from "../progress.ts";
import { objectOf, type Json } from "../record.ts";
import { MAX_REASON_CHARS, MAX_VALUE_CHARS, type Reducer, type Reduction, type Summary } from "../reduction.ts";
import { clean } from "../text.ts";
import type { Refused, Tokens } from "../verdict.ts";
import { chooseMode } from "./modes.ts";
import { agentFacts } from "./permission.ts";
import { PermissionDesk } from "./permission-desk.ts";
import type { AcpClientOptions } from "./client-options.ts";

export type { AcpClientOptions };
import { ACP_PROTOCOL_VERSION, type ClientCapabilities, type RpcError, type RpcId } from "./protocol.ts";
import { rpcErrorOf, stopFailure } from "./stop.ts";
import { AcpTools } from "./tools.ts";
import { AcpUpdates } from "./updates.ts";
import { AcpUsage } from "./usage.ts";

type Stage = "start" | "initialize" | "session" | "mode" | "prompt" | "done";
const REQUEST = { initialize: 1, session: 2, prompt: 3, mode: 4 } as const;

export class AcpClient implements Reducer {
  private stage: Stage = "start";
  private sessionId: string | null = null;
  private stopReason: string | null = null;
  private failure: { kind: FailureKind; message: string } | null = null;
  private cancelSent = false;
  private readonly refused: Refused[] = [];
  private readonly session: AcpUpdates;
  private readonly tools: AcpTools;
  private readonly usage: AcpUsage;
  private readonly counts = {
    records: 0,
    oversize_records: 0,
    unknown_methods: 0,
    stray_responses: 0,
    early_messages: 0,
    replayed_updates: 0,
    other_session_updates: 0,
    permission_requests: 0,
    permissions_forwarded: 0,
    permissions_allowed: 0,
    refused_requests: 0,
  };
  private readonly agent: Summary = {};
  private readonly desk: PermissionDesk;
  private write: (message: Json) => void = () => {};

  constructor(private readonly options: AcpClientOptions) {
    this.session = new AcpUpdates(options.cwd, (event) => this.send(event), options.loop, new AcpUsage(options.earlierCostMicroUsd ?? 0));
    this.tools = this.session.tools;
    this.usage = this.session.usage;
    this.desk = new PermissionDesk(options, this.tools, this.counts, this.refused, (id, result, error) => this.reply(id, result, error));
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
    this.request(REQUEST.initialize, "initialize", {
      protocolVersion: ACP_PROTOCOL_VERSION,
      clientCapabilities: this.capabilities(),
      clientInfo: { name: "agentport", version: this.options.clientVersion ?? "0" },
    });
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
    const message = objectOf(value);
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
    this.fail(
      "no_result",
      this.stage === "prompt"
        ? "acp: the agent's output ended before the prompt's response"
        : `acp: the agent's output ended during ${this.stage === "session" || this.stage === "mode" ? "session setup" : "initialize"}`,
    );
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
    const summary: Summary = {
      ...this.counts,
      ...this.agent,
      text_chunks: this.session.chunks,
      plan_updates: this.session.plans,
      tool_calls: this.tools.calls,
      tool_errors: this.tools.failed,
    };
    if (this.cancelSent) summary.cancel_sent = true;
    if (this.usage.contextUsed !== undefined) summary.context_used = this.usage.contextUsed;
    if (this.usage.contextSize !== undefined) summary.context_size = this.usage.contextSize;
    const completed = this.failure === null && this.stopReason === "end_turn";
    return {
      text: completed ? this.session.text : null,
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
    const params = objectOf(message.params) ?? {};
    if (hasId) this.desk.request(message.id as RpcId, method, params, this.stage === "start" || this.stage === "initialize");
    else this.notification(method, params);
  }

  private response(id: RpcId, message: Json): void {
    const expected = this.stage === "done" || this.stage === "start" ? null : REQUEST[this.stage];
    if (id !== expected) {
      this.counts.stray_responses += 1;
      return;
    }
    const error = objectOf(message.error);
    if (error !== null) {
      this.rpcFailure(error);
      return;
    }
    const result = objectOf(message.result) ?? {};
    if (this.stage === "initialize") this.initialized(result);
    else if (this.stage === "session") this.sessionReady(result);
    else if (this.stage === "mode") this.prompt();
    else this.promptAnswered(result);
  }

  private initialized(result: Json): void {
    const caps = objectOf(result.agentCapabilities) ?? {};
    Object.assign(this.agent, agentFacts(result));
    if (result.protocolVersion !== ACP_PROTOCOL_VERSION) {
      this.fail(
        "agent_error",
        `acp: the agent speaks protocol version ${clean(String(result.protocolVersion), 20)}, agentport speaks ${ACP_PROTOCOL_VERSION}`,
      );
      return;
    }
    this.stage = "session";
    const load = this.options.loadSessionId;
    if (load === undefined) {
      this.request(REQUEST.session, "session/new", { cwd: this.options.cwd, mcpServers: [] });
      return;
    }
    if (caps.loadSession !== true) {
      this.fail(
        "refused",
        `acp: ${this.agent.agent_name || "the agent"} does not advertise loadSession: its sessions cannot be resumed; start a new one with agentport run`,
      );
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
    const mode = chooseMode(result.modes, this.options.permissionMode);
    if (mode.current !== null) this.agent.agent_mode = mode.current;
    if (mode.set === null) {
      this.prompt();
      return;
    }
    this.stage = "mode";
    this.agent.agent_mode = mode.set;
    this.request(REQUEST.mode, "session/set_mode", { sessionId: this.sessionId, modeId: mode.set });
  }

  private prompt(): void {
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
    if (reason === "end_turn") this.options.loop?.turn();
    const failed = stopFailure(reason, this.cancelSent);
    if (failed !== null) this.fail(failed.kind, failed.message);
  }

  private rpcFailure(error: Json): void {
    const { code, what } = rpcErrorOf(error);
    if (code >= 400 && code < 600) this.agent.api_error_status = code;
    const step =
      this.stage === "prompt"
        ? "the prompt"
        : this.stage === "mode"
          ? `session/set_mode ${this.agent.agent_mode}`
          : this.stage === "session"
            ? this.options.loadSessionId
              ? "session/load"
              : "session/new"
            : "initialize";
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
    const update = objectOf(params.update) ?? {};
    // The agent may switch its own mode mid-session (gemini after an "allow always"): the phase says which it ended in.
    if (update.sessionUpdate === "current_mode_update" && typeof update.currentModeId === "string")
      this.agent.agent_mode = clean(update.currentModeId, MAX_VALUE_CHARS);
    // Before the prompt (a session/load): the agent replays the earlier conversation, which is not this phase's text.
    if (this.stage !== "prompt") {
      this.counts.replayed_updates += 1;
      return;
    }
    this.session.update(update);
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
