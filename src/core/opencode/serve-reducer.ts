// The opencode serve reducer: one session's turn on `opencode serve`'s event
// stream, one event's data a line (opencode 1.18.33, ground truth §6). It
// never starts a process, reads a clock or makes a request: a permission
// asked is handed to `onPermission` (the phase answers it over HTTP), and the
// answer comes back as the `permission.replied` event, so a replay of the
// kept events reaches the same verdict.
//
// Every event is `{id, type, properties}`; only those whose
// `properties.sessionID` is the session's are read (the session given, else
// the first one named). Text is the last text part (its full text on
// `message.part.updated`, its `message.part.delta`s in between); a tool part
// after it starts a new reply. Tokens, cost, the model and the finish reason
// come from the assistant `message.updated` (one message a step, updated in
// place: the last update of each counts). `session.status {type:"retry"}` is
// a provider retry; `session.error` and an assistant message's `error` are
// the turn's failure; the turn is over at `session.idle`. A step ending in
// `unknown` is a cut stream, which opencode asks again at once: each one is
// the same action to the loop observer.
import { digest } from "../digest.ts";
import { JsonLineReducer } from "../json-lines.ts";
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { count } from "../numbers.ts";
import { costMicroUsd, type Price } from "../prices.ts";
import { MAX_TOOL_CHARS, type ProgressSink } from "../progress.ts";
import { MAX_VALUE_CHARS, type Reducer, type Reduction, type Summary } from "../reduction.ts";
import type { Json } from "../record.ts";
import { clean } from "../text.ts";
import type { Tokens } from "../verdict.ts";
import { CutSteps, INVALID_TOOL, objectOf, REJECTED, toolDetail } from "./common.ts";
import { AssistantMessages } from "./serve-messages.ts";
import { ServePermissions, type PermissionAsked } from "./serve-permissions.ts";
import { ServeTools } from "./serve-tools.ts";
import { idleFailure } from "./serve-idle.ts";
import type { OpencodeServeEvent } from "./events.ts";

export type { PermissionAsked };

export interface ServeReducerOptions {
  /** The session to read; else the first one an event names. */
  sessionId?: string;
  cwd?: string;
  emit?: ProgressSink;
  loop?: LoopObserver;
  /** The user's price, used only when no message carried opencode's cost. */
  price?: Price | null;
  onPermission?: (asked: PermissionAsked) => void;
}

export class OpencodeServeReducer extends JsonLineReducer implements Reducer {
  private sessionId: string | null;
  private readonly cwd: string;
  private readonly loop: LoopObserver | undefined;
  private readonly price: Price | null;
  private readonly onPermission: ServeReducerOptions["onPermission"];

  private sessionEvents = 0;
  private otherEvents = 0;
  private idle = false;
  private text: string | null = null;
  private textPart = "";
  private readonly messages = new AssistantMessages();
  private steps = 0;
  private readonly cut: CutSteps;
  private readonly tools = new ServeTools();
  private toolErrors = 0;
  private readonly permissions = new ServePermissions();
  private retries = 0;
  private pendingRetry: string | null = null;
  private lastRetry: string | null = null;
  private sessionError: Json | null = null;
  private apiStatus: number | null = null;
  private errorName = "";
  private requestFailure: string | null = null;

  constructor(options: ServeReducerOptions = {}) {
    super(options.emit, "opencode: serve events");
    this.sessionId = options.sessionId ?? null;
    this.cwd = options.cwd ?? "";
    this.loop = options.loop;
    this.cut = new CutSteps(options.loop);
    this.price = options.price ?? null;
    this.onPermission = options.onPermission;
  }

  /** The session's events seen so far: what a stall clock counts (the server's heartbeats are not the agent's). */
  get seen(): number {
    return this.sessionEvents;
  }

  finished(): boolean {
    return this.idle;
  }

  /** A request the turn depends on failed (the session, the prompt, a reply): the turn's failure, opencode's side. */
  requestFailed(what: string, error: unknown): void {
    // Kept apart until the stream ends: the events go on being read (the idle, the usage).
    this.requestFailure ??= `opencode serve: ${what}: ${error instanceof Error ? error.message : String(error)}`;
  }

  streamEnded(): void {
    if (this.requestFailure !== null) this.fail(this.requestFailure, "agent_error");
    if (this.failure !== null) return;
    if (!this.idle) {
      if (this.sessionEvents === 0) return this.fail("opencode serve: no event of the session arrived", "no_result");
      return this.fail("opencode serve: the event stream ended before the session was idle", "no_result");
    }
    this.judgeTurn();
  }

  reduction(): Reduction {
    const totals = this.messages.totals();
    const finish = this.messages.last?.finish ?? "";
    const summary: Summary = {
      records: this.records,
      session_events: this.sessionEvents,
      other_events: this.otherEvents,
      oversize_records: this.oversizeLines,
      steps: this.steps,
      cut_steps: this.cut.total,
      tool_calls: this.tools.calls,
      tool_errors: this.toolErrors,
      refused_requests: this.permissions.refusedCount,
      permissions_asked: this.permissions.askedCount,
      permissions_allowed: this.permissions.allowedCount,
      retries: this.retries,
      reasoning_tokens: totals.reasoning,
    };
    if (finish) summary.last_finish_reason = finish;
    if (this.errorName) summary.error_name = this.errorName;
    if (this.apiStatus !== null) summary.api_error_status = this.apiStatus;
    if (this.lastRetry !== null) summary.last_retry_error = this.lastRetry;
    if (this.messages.model !== null) summary.model = this.messages.model;
    return {
      text: this.failure === null ? this.text : null,
      failure: this.failed(),
      finished: this.idle,
      toolCalls: this.tools.calls,
      pendingRetryError: this.pendingRetry,
      sessionId: this.sessionId,
      model: this.messages.model,
      stopReason: finish || null,
      costMicroUsd: totals.costMicroUsd ?? costMicroUsd(totals.tokens, this.price),
      costDerived: totals.costMicroUsd === null,
      tokens: totals.tokens,
      refused: [...this.permissions.refused],
      summary,
    };
  }

  liveTokens(): Tokens | null {
    return this.messages.totals().tokens;
  }

  /** Tool calls started and not ended (pending or running): the supervisor samples the server's tree while one is open. */
  liveOpenTools(): number {
    return this.tools.open;
  }

  liveCost(): number | null {
    return this.messages.totals().costMicroUsd;
  }

  /** The provider error opencode is retrying now (its retry status's message): a quota wall is not waited out. */
  liveRetryError(): string | null {
    return this.pendingRetry;
  }

  // -- internals ---------------------------------------------------------------

  protected reading(): boolean {
    return this.failure === null;
  }

  protected observe(raw: Json & { type: string }): void {
    const record = raw as OpencodeServeEvent;
    const properties = objectOf(record.properties);
    const sessionId = typeof properties.sessionID === "string" ? properties.sessionID : null;
    if (sessionId === null || (this.sessionId !== null && sessionId !== this.sessionId)) {
      this.otherEvents += 1;
      return;
    }
    if (this.sessionId === null) this.sessionId = sessionId;
    if (this.sessionEvents === 0) this.send({ kind: "started" });
    this.sessionEvents += 1;
    switch (record.type) {
      case "message.updated":
        return this.messageUpdated(objectOf(properties.info));
      case "message.part.updated":
        return this.partUpdated(objectOf(properties.part));
      case "message.part.delta":
        return this.delta(properties);
      case "session.status":
        return this.status(objectOf(properties.status));
      case "session.error":
        this.sessionError = objectOf(properties.error);
        return;
      case "session.idle":
        this.idle = true;
        return;
      case "permission.asked":
        return this.permissionAsked(properties);
      case "permission.replied":
        return this.permissionReplied(properties);
      default:
        this.send({ kind: "activity" });
    }
  }

  private messageUpdated(info: Json): void {
    if (info.role !== "assistant") return;
    this.messages.update(info);
    this.send({ kind: "activity" });
  }

  private partUpdated(part: Json): void {
    // Output of the model: a retry it was waiting on is over.
    this.pendingRetry = null;
    const id = clean(part.id, MAX_VALUE_CHARS);
    switch (part.type) {
      case "text":
        if (id !== this.textPart) {
          this.textPart = id;
          this.send({ kind: "assistant_text" });
        }
        this.text = typeof part.text === "string" ? part.text : "";
        if (objectOf(part.time).end !== undefined) this.loop?.turn(this.text ? digest(this.text) : undefined);
        return;
      case "reasoning":
        this.send({ kind: "thinking" });
        return;
      case "tool":
        return this.tool(id, part);
      case "step-start":
        this.steps += 1;
        this.send({ kind: "activity" });
        return;
      case "step-finish":
        return this.stepFinish(part);
      default:
        this.send({ kind: "activity" });
    }
  }

  private delta(properties: Json): void {
    if (properties.field !== "text" || typeof properties.delta !== "string") return;
    if (clean(properties.partID, MAX_VALUE_CHARS) !== this.textPart || this.text === null) return;
    this.pendingRetry = null;
    this.text += properties.delta;
  }

  private tool(id: string, part: Json): void {
    const update = this.tools.update(id, part);
    if (update === null) return;
    const { tool, state, status } = update;
    if (update.started) {
      this.cut.progress();
      // Text after a tool call is a new reply: the final text is the last one's.
      this.text = null;
      this.textPart = "";
      this.send({ kind: "tool_started", tool, detail: toolDetail(tool, objectOf(state.input), this.cwd) });
    }
    if (!update.ended) return;
    const error = typeof state.error === "string" ? state.error : "";
    if (tool === INVALID_TOOL) {
      this.permissions.refuse(`${clean(objectOf(state.input).tool, MAX_TOOL_CHARS) || "unknown tool"} (not offered)`);
      this.toolErrors += 1;
      this.send({ kind: "tool_failed", tool });
    } else if (status === "error") {
      this.toolErrors += 1;
      // A rejection is named once, by the reply that made it (permission.replied).
      if (!error.startsWith(REJECTED)) this.send({ kind: "tool_failed", tool });
    } else {
      this.send({ kind: "tool_finished", tool });
    }
    this.loop?.action(tool, actionFingerprint(tool, digest(state.input ?? ""), digest([status, state.output ?? error])));
  }

  private stepFinish(part: Json): void {
    const reason = clean(part.reason, 40) || "unknown";
    this.cut.finish(reason);
    this.send({ kind: "activity" });
  }

  private status(status: Json): void {
    if (status.type !== "retry") return this.send({ kind: "activity" });
    this.retries += 1;
    const message = clean(status.message, MAX_VALUE_CHARS) || "retrying";
    this.pendingRetry = message;
    this.lastRetry = message;
    this.loop?.retry();
    const attempt = count(status.attempt);
    this.send({ kind: "provider_retry", detail: attempt === undefined ? "" : `attempt ${attempt}` });
  }

  private permissionAsked(properties: Json): void {
    const asked = this.permissions.asked(properties);
    if (asked === null) return;
    this.send({ kind: "activity" });
    this.onPermission?.(asked);
  }

  private permissionReplied(properties: Json): void {
    const rejected = this.permissions.replied(properties);
    if (rejected !== null) this.send({ kind: "tool_failed", tool: rejected });
  }

  /** The session is idle: what its last message and errors say. */
  private judgeTurn(): void {
    const failure = idleFailure(this.sessionError, this.messages.last, this.cut);
    if (failure === null) return;
    this.errorName = failure.errorName;
    if (failure.apiStatus !== null) this.apiStatus = failure.apiStatus;
    this.fail(failure.message, failure.kind);
  }
}
