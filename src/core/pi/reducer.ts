// The pi event reducer: `pi --mode json` (and one RPC turn), fed one line at a
// time through the shared line reducer (scanned-lines.ts). Line 1 of json mode is the session header; then events (pi 0.73.1,
// ground truth §2-3). json mode exits 0 even when the run failed, so the
// verdict comes from the stream: the last assistant `message_end`, and the run
// is over only at its last `agent_end` (an auto-retry or a compaction reopens
// it). Lines that are not JSON (an extension's console.log) are counted and
// skipped; blank lines are skipped.
//
// What it keeps: the header (session id, cwd), the last assistant text, tokens
// and cost summed over every assistant message (retried attempts included:
// they were billed), the last stopReason and errorMessage, the observed
// provider/model, the envelope from a non-error `tool_execution_end` of the
// envelope tool, and an inventory entry when pi emits one.
import { driftOf, UnknownTypes } from "../drift.ts";
import { digest } from "../digest.ts";
import { failure, type Failure, type FailureKind } from "../failure.ts";
import type { LoopObserver } from "../loop.ts";
import { count } from "../numbers.ts";
import type { ProgressSink } from "../progress.ts";
import { MAX_REASON_CHARS, MAX_VALUE_CHARS, type Reducer, type Reduction, type Summary } from "../reduction.ts";
import type { Json } from "../record.ts";
import { ScannedLineReducer } from "../scanned-lines.ts";
import type { LiveTurns } from "../supervisor.ts";
import { clean } from "../text.ts";
import type { Tokens } from "../verdict.ts";
import { PiBill } from "./bill.ts";
import { readAssistant } from "./assistant.ts";
import type { PiRecord } from "./events.ts";
import { inventoryOf, type Inventory } from "./inventory.ts";
import { piPlan } from "./plan.ts";
import { ENVELOPE_TOOL, PiToolCalls } from "./tool-calls.ts";
import { PiRunEnd } from "./run-end.ts";

export { ENVELOPE_TOOL } from "./tool-calls.ts";
export { readInventory, type Inventory } from "./inventory.ts";

/** What the pi stream says, before the judge weighs it against the request. */
export interface PiReading extends Reduction {
  /** The header's cwd, where pi really ran. */
  headerCwd: string | null;
  /** `provider/model` of the last assistant message. */
  observedModel: string | null;
  /** The last assistant message's errorMessage, bounded. */
  errorMessage: string | null;
  envelope: Json | null;
  /** The envelope tool was called but pi refused the arguments (schema errors), bounded. */
  envelopeError: string | null;
  inventory: Inventory | null;
  /** Assistant messages seen; 0 means pi never answered. */
  assistantMessages: number;
}

export interface PiReducerOptions {
  cwd?: string;
  /** json mode starts with a session header; RPC turns do not. */
  expectHeader?: boolean;
  emit?: ProgressSink;
  loop?: LoopObserver;
  envelopeTool?: string;
  /** Called once the session header arrives, with pi's id and cwd. */
  onHeader?: (id: string, cwd: string | null) => void;
}

export class PiReducer extends ScannedLineReducer implements Reducer {
  private readonly expectHeader: boolean;
  private readonly loop: LoopObserver | undefined;
  private readonly onHeader: PiReducerOptions["onHeader"];
  private readonly tools: PiToolCalls;

  private nonJson = 0;
  private sessionId: string | null = null;
  private headerCwd: string | null = null;
  private sawHeader = false;
  private text: string | null = null;
  private stopReason: string | null = null;
  private errorMessage: string | null = null;
  private observedModel: string | null = null;
  private readonly bill = new PiBill();
  private inventory: Inventory | null = null;

  private unknown = 0;
  private readonly unknownTypes = new UnknownTypes();
  private assistantMessages = 0;
  private readonly end = new PiRunEnd();

  constructor(options: PiReducerOptions = {}) {
    super(options.emit, "pi: json", piPlan(options.envelopeTool ?? ENVELOPE_TOOL), options.loop !== undefined);
    this.expectHeader = options.expectHeader ?? true;
    this.loop = options.loop;
    this.onHeader = options.onHeader;
    this.tools = new PiToolCalls(options.cwd ?? "", options.envelopeTool ?? ENVELOPE_TOOL, options.loop, (event) => this.send(event));
  }

  protected reading(): boolean {
    return this.failure === null;
  }

  /** Not pi's: an extension's console.log, a stray print. Counted, never fatal. */
  protected override notRecord(_why: string): void {
    this.nonJson += 1;
  }

  protected observe(event: Json & { type: string }): void {
    if (this.expectHeader && !this.sawHeader) {
      if (event.type !== "session") {
        this.protocol(`the first line is not the session header (type ${clean(event.type, 40)})`);
        return;
      }
      this.header(event);
      return;
    }
    this.event(event);
  }

  liveOpenTools(): number {
    return this.tools.openCount;
  }

  finished(): boolean {
    return this.end.over;
  }

  streamEnded(): void {
    if (this.failure !== null) return;
    const tail = this.badTail === null ? "" : `; ${this.badTail}`;
    if (this.finished()) {
      if (this.badTail !== null) this.protocol(this.badTail);
      return;
    }
    // Nothing, a header only, or a run cut off: the judge adds the exit code and stderr.
    const what = this.assistantMessages === 0 ? "pi: no answer" : "pi: no result: the stream ended before the run's agent_end";
    this.fail(`${what}${tail}`, "no_result");
  }

  /** The header line arrived (json mode): the session is bound. */
  hasHeader(): boolean {
    return this.sawHeader;
  }

  reduction(): PiReading {
    const summary: Summary = {
      records: this.records,
      oversize_records: this.oversizeLines,
      unknown_events: this.unknown,
      assistant_messages: this.assistantMessages,
      agent_ends: this.end.agentEnds,
      tool_calls: this.tools.calls,
      tool_errors: this.tools.errors,
      provider_retries: this.end.retries,
      compactions: this.end.compactions,
    };
    if (this.end.retryOutcome) summary.retry_outcome = this.end.retryOutcome;
    if (this.nonJson > 0) summary.non_json_lines = this.nonJson;
    if (this.blankLines > 0) summary.blank_lines = this.blankLines;
    if (this.unterminatedLast) summary.unterminated_last_line = true;
    if (this.observedModel) summary.model = this.observedModel;
    if (this.stopReason) summary.stop_reason = this.stopReason;
    return {
      text: this.text,
      failure: this.failed() ?? this.stopFailure(),
      finished: this.finished(),
      toolCalls: this.tools.calls,
      pendingRetryError: this.stopReason === "error" ? this.errorMessage : null,
      sessionId: this.sessionId,
      model: this.observedModel,
      stopReason: this.stopReason,
      costMicroUsd: this.liveCost(),
      tokens: this.liveTokens(),
      refused: [],
      drift: this.failure !== null && this.failureKind === "no_result" ? driftOf(this.unknownTypes, ["agent_end"]) : undefined,
      summary,
      headerCwd: this.headerCwd,
      observedModel: this.observedModel,
      errorMessage: this.errorMessage,
      envelope: this.tools.envelope,
      envelopeError: this.tools.envelopeError,
      inventory: this.inventory,
      assistantMessages: this.assistantMessages,
    };
  }

  liveTokens(): Tokens | null {
    return this.assistantMessages > 0 ? this.bill.tokens : null;
  }

  liveCost(): number | null {
    return this.assistantMessages > 0 ? this.bill.costMicroUsd : null;
  }

  liveRetryError(): string | null {
    return this.stopReason === "error" ? this.errorMessage : null;
  }

  costSilent(): string | null {
    return this.assistantMessages > 0 && this.bill.costMicroUsd === null
      ? "pi's assistant message carried token counts but no usage.cost"
      : null;
  }

  /** pi wants another turn when its last message stopped for a tool call. */
  liveTurns(): LiveTurns {
    return { count: this.assistantMessages, continuing: this.stopReason === "toolUse" };
  }

  // -- internals ---------------------------------------------------------------

  /** The last assistant message ended the run in error (the provider) or aborted (pi itself). */
  private stopFailure(): Failure | null {
    if (this.stopReason !== "error" && this.stopReason !== "aborted") return null;
    const kind: FailureKind = this.stopReason === "error" ? "provider_error" : "agent_error";
    return failure(kind, clean(`pi: stopped on ${this.stopReason}${this.errorMessage ? `: ${this.errorMessage}` : ""}`, MAX_REASON_CHARS));
  }

  private header(event: Json): void {
    this.sawHeader = true;
    this.sessionId = clean(event.id, MAX_VALUE_CHARS) || null;
    this.headerCwd = typeof event.cwd === "string" ? event.cwd : null;
    if (this.sessionId !== null) this.onHeader?.(this.sessionId, this.headerCwd);
    this.send({ kind: "started" });
  }

  private event(raw: Json & { type: string }): void {
    const event = raw as PiRecord;
    switch (event.type) {
      case "message_end":
        this.messageEnd(event.message);
        return;
      case "message_update":
        this.messageUpdate(event.assistantMessageEvent);
        return;
      case "tool_execution_start":
        this.tools.start(event);
        return;
      case "tool_execution_end":
        this.tools.end(event);
        return;
      case "auto_retry_start": {
        this.end.retryStart();
        this.loop?.retry();
        const attempt = count(event.attempt);
        const max = count(event.maxAttempts);
        this.send({
          kind: "provider_retry",
          detail: attempt === undefined ? "" : `attempt ${attempt}${max === undefined ? "" : ` of ${max}`}`,
        });
        return;
      }
      case "auto_retry_end":
        this.end.retryEnd(event.success === true);
        this.send({ kind: "activity" });
        return;
      case "agent_end":
        this.end.agentEnd();
        this.send({ kind: "activity" });
        return;
      case "compaction_start":
        this.end.compactionStart();
        this.send({ kind: "activity" });
        return;
      case "entry_appended":
        this.inventory = inventoryOf(event.entry) ?? this.inventory;
        this.send({ kind: "activity" });
        return;
      case "session":
        // A header inside the stream (RPC after switch_session): a new binding.
        this.header(event);
        return;
      case "agent_start":
        this.end.agentStart();
        this.send({ kind: "activity" });
        return;
      case "compaction_end":
        this.end.compactionEnd(event.willRetry === true);
        this.send({ kind: "activity" });
        return;
      case "turn_start":
      case "turn_end":
      case "message_start":
      case "tool_execution_update":
      case "queue_update":
      case "thinking_level_changed":
      // RPC: the end of a turn in pi >= 0.85 (src/rpc/turn-end.ts).
      case "agent_settled":
        this.send({ kind: "activity" });
        return;
      default:
        this.unknown += 1;
        this.unknownTypes.add(raw.type);
        this.send({ kind: "activity" });
    }
  }

  private messageUpdate(update: unknown): void {
    const kind = update !== null && typeof update === "object" ? (update as Json).type : undefined;
    if (kind === "thinking_start") this.send({ kind: "thinking" });
    else if (kind === "text_start") this.send({ kind: "assistant_text" });
    else this.send({ kind: "activity" });
  }

  private messageEnd(message: unknown): void {
    const m = readAssistant(message);
    if (m === null) {
      this.send({ kind: "activity" });
      return;
    }
    this.assistantMessages += 1;
    if (m.text) this.text = m.text;
    this.loop?.turn(m.text ? digest(m.text) : undefined);
    this.stopReason = m.stopReason;
    this.errorMessage = m.errorMessage;
    if (m.model !== null) this.observedModel = m.model;
    this.bill.add(m.usage);
    this.send({ kind: "activity" });
  }
}
