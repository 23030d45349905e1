// The pi event reducer: `pi --mode json` (and one RPC turn), fed one line at a
// time. Line 1 of json mode is the session header; then events (pi 0.73.1,
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
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { addCapped, count, microUsd } from "../numbers.ts";
import { MAX_DETAIL_CHARS, MAX_TOOL_CHARS, withRunning, type ProgressEvent, type ProgressSink } from "../progress.ts";
import { MAX_REASON_CHARS, MAX_VALUE_CHARS, type Reducer, type Reduction, type Summary } from "../reduction.ts";
import { parseRecord, type Json, type Parsed } from "../record.ts";
import { RecordScanner } from "../scan.ts";
import { clean, relativePath } from "../text.ts";
import type { Tokens } from "../verdict.ts";
import type { LiveTurns } from "../supervisor.ts";
import { piPlan } from "./plan.ts";

export const ENVELOPE_TOOL = "report_phase";
export const INVENTORY_ENTRY = "agentport-inventory";
// The one input shown per pi tool: the path for file tools. bash shows only
// its name: a command line is where credentials are typed.
const PATH_TOOLS = new Set(["read", "edit", "write"]);
const MAX_OPEN_TOOLS = 1024;

export interface Inventory {
  piVersion: string;
  extensions: string[];
}

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

interface OpenTool {
  name: string;
  inputDigest: string;
}

export class PiReducer implements Reducer {
  private readonly cwd: string;
  private readonly expectHeader: boolean;
  private readonly emit: ProgressSink | undefined;
  private readonly loop: LoopObserver | undefined;
  private readonly envelopeTool: string;
  private readonly onHeader: PiReducerOptions["onHeader"];
  private readonly scanner: RecordScanner;

  private failure: Failure | null = null;
  private badTail: string | null = null;
  private unterminatedLast = false;
  private nonJson = 0;
  private blankLines = 0;
  /** Between agent_start (or a retry's announcement) and agent_end. */
  private open = false;
  private sessionId: string | null = null;
  private headerCwd: string | null = null;
  private sawHeader = false;
  private text: string | null = null;
  private stopReason: string | null = null;
  private errorMessage: string | null = null;
  private observedModel: string | null = null;
  private tokens: Tokens | null = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  private costMicroUsd: number | null = 0;
  private envelope: Json | null = null;
  private envelopeError: string | null = null;
  private inventory: Inventory | null = null;
  private readonly openTools = new Map<string, OpenTool>();

  private records = 0;
  private oversizeLines = 0;
  private unknown = 0;
  private readonly unknownTypes = new UnknownTypes();
  private assistantMessages = 0;
  private agentEnds = 0;
  private toolCalls = 0;
  private toolErrors = 0;
  private retries = 0;
  private retryOutcome: "" | "success" | "failure" = "";
  private compactions = 0;

  constructor(options: PiReducerOptions = {}) {
    this.cwd = options.cwd ?? "";
    this.expectHeader = options.expectHeader ?? true;
    this.emit = options.emit;
    this.loop = options.loop;
    this.envelopeTool = options.envelopeTool ?? ENVELOPE_TOOL;
    this.onHeader = options.onHeader;
    this.scanner = new RecordScanner(piPlan(this.envelopeTool));
  }

  line(text: string): void {
    if (text.trim() === "") {
      this.blankLines += 1;
      return;
    }
    this.records += 1;
    if (this.failure !== null) return;
    this.take(parseRecord(text));
  }

  bigLine(bytes: Uint8Array): void {
    this.records += 1;
    if (this.failure !== null) return;
    this.take(this.scanner.scan(bytes, this.loop !== undefined));
  }

  private take(parsed: Parsed): void {
    if (!parsed.ok) {
      // Not pi's: an extension's console.log, a stray print. Counted, never fatal.
      this.nonJson += 1;
      return;
    }
    const event = parsed.record;
    if (this.expectHeader && !this.sawHeader) {
      if (event.type !== "session") {
        this.protocol(`the first line is not the session header (type ${clean(event.type, 40)})`);
        return;
      }
      this.header(event);
      return;
    }
    this.observe(event);
  }

  oversize(_limit: number): void {
    this.oversizeLines += 1;
    this.send({ kind: "activity" });
  }

  framingError(what: string): void {
    this.protocol(what);
  }

  unterminated(text: string): void {
    if (text.trim() === "" || parseRecord(text).ok) {
      this.unterminatedLast = text.trim() !== "";
      this.line(text);
    } else {
      this.badTail = `the last line has no LF and is not a whole record (${text.length} characters)`;
    }
  }

  finished(): boolean {
    return this.agentEnds > 0 && !this.open;
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
    this.fail("no_result", `${what}${tail}`);
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
      agent_ends: this.agentEnds,
      tool_calls: this.toolCalls,
      tool_errors: this.toolErrors,
      provider_retries: this.retries,
      compactions: this.compactions,
    };
    if (this.retryOutcome) summary.retry_outcome = this.retryOutcome;
    if (this.nonJson > 0) summary.non_json_lines = this.nonJson;
    if (this.blankLines > 0) summary.blank_lines = this.blankLines;
    if (this.unterminatedLast) summary.unterminated_last_line = true;
    if (this.observedModel) summary.model = this.observedModel;
    if (this.stopReason) summary.stop_reason = this.stopReason;
    return {
      text: this.text,
      failure: this.failure ?? this.stopFailure(),
      finished: this.finished(),
      toolCalls: this.toolCalls,
      pendingRetryError: this.stopReason === "error" ? this.errorMessage : null,
      sessionId: this.sessionId,
      model: this.observedModel,
      stopReason: this.stopReason,
      costMicroUsd: this.liveCost(),
      tokens: this.liveTokens(),
      refused: [],
      drift: this.failure?.kind === "no_result" ? driftOf(this.unknownTypes, ["agent_end"]) : undefined,
      summary,
      headerCwd: this.headerCwd,
      observedModel: this.observedModel,
      errorMessage: this.errorMessage,
      envelope: this.envelope,
      envelopeError: this.envelopeError,
      inventory: this.inventory,
      assistantMessages: this.assistantMessages,
    };
  }

  liveTokens(): Tokens | null {
    return this.assistantMessages > 0 ? this.tokens : null;
  }

  liveCost(): number | null {
    return this.assistantMessages > 0 ? this.costMicroUsd : null;
  }

  liveRetryError(): string | null {
    return this.stopReason === "error" ? this.errorMessage : null;
  }

  costSilent(): string | null {
    return this.assistantMessages > 0 && this.costMicroUsd === null ? "pi's assistant message carried token counts but no usage.cost" : null;
  }

  /** pi wants another turn when its last message stopped for a tool call. */
  liveTurns(): LiveTurns {
    return { count: this.assistantMessages, continuing: this.stopReason === "toolUse" };
  }

  // -- internals ---------------------------------------------------------------

  private send(event: ProgressEvent): void {
    this.emit?.(withRunning(event, this));
  }

  private fail(kind: FailureKind, what: string): void {
    if (this.failure === null) this.failure = failure(kind, clean(what, MAX_REASON_CHARS));
  }

  private protocol(what: string): void {
    this.fail("protocol", `pi: json protocol violation: ${what}`);
  }

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

  private observe(event: Json): void {
    switch (event.type) {
      case "message_end":
        this.messageEnd(event.message);
        return;
      case "message_update":
        this.messageUpdate(event.assistantMessageEvent);
        return;
      case "tool_execution_start":
        this.toolStart(event);
        return;
      case "tool_execution_end":
        this.toolEnd(event);
        return;
      case "auto_retry_start": {
        this.retries += 1;
        this.open = true;
        this.loop?.retry();
        const attempt = count(event.attempt);
        const max = count(event.maxAttempts);
        this.send({ kind: "provider_retry", detail: attempt === undefined ? "" : `attempt ${attempt}${max === undefined ? "" : ` of ${max}`}` });
        return;
      }
      case "auto_retry_end":
        this.retryOutcome = event.success === true ? "success" : "failure";
        if (event.success !== true) this.open = false;
        this.send({ kind: "activity" });
        return;
      case "agent_end":
        this.agentEnds += 1;
        this.open = false;
        this.send({ kind: "activity" });
        return;
      case "compaction_start":
        this.compactions += 1;
        if (this.agentEnds > 0) this.open = true;
        this.send({ kind: "activity" });
        return;
      case "entry_appended":
        this.entry(event.entry);
        this.send({ kind: "activity" });
        return;
      case "session":
        // A header inside the stream (RPC after switch_session): a new binding.
        this.header(event);
        return;
      case "agent_start":
        this.open = true;
        this.send({ kind: "activity" });
        return;
      case "compaction_end":
        // willRetry: agent.continue() follows; else the compaction closed nothing new.
        if (event.willRetry !== true && this.agentEnds > 0) this.open = false;
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
        this.unknownTypes.add(event.type);
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
    if (message === null || typeof message !== "object") {
      this.send({ kind: "activity" });
      return;
    }
    const m = message as Json;
    if (m.role !== "assistant") {
      this.send({ kind: "activity" });
      return;
    }
    this.assistantMessages += 1;
    const content = Array.isArray(m.content) ? m.content : [];
    const text = content
      .filter((b): b is Json => b !== null && typeof b === "object" && (b as Json).type === "text" && typeof (b as Json).text === "string")
      .map((b) => b.text as string)
      .join("");
    if (text) this.text = text;
    this.loop?.turn(text ? digest(text) : undefined);
    this.stopReason = clean(m.stopReason, MAX_VALUE_CHARS) || null;
    this.errorMessage = clean(m.errorMessage, MAX_VALUE_CHARS * 2) || null;
    const provider = clean(m.provider, MAX_VALUE_CHARS);
    const model = clean(m.model, MAX_VALUE_CHARS);
    if (model) this.observedModel = provider ? `${provider}/${model}` : model;
    this.takeUsage(m.usage);
    this.send({ kind: "activity" });
  }

  private takeUsage(usage: unknown): void {
    const u = usage !== null && typeof usage === "object" ? (usage as Json) : {};
    const input = count(u.input);
    const output = count(u.output);
    if (this.tokens !== null) {
      if (input === undefined || output === undefined) this.tokens = null;
      else {
        this.tokens = {
          input: addCapped(this.tokens.input, input),
          output: addCapped(this.tokens.output, output),
          cache_read: addCapped(this.tokens.cache_read, count(u.cacheRead) ?? 0),
          cache_write: addCapped(this.tokens.cache_write, count(u.cacheWrite) ?? 0),
        };
      }
    }
    if (this.costMicroUsd !== null) {
      const cost = u.cost !== null && typeof u.cost === "object" ? microUsd((u.cost as Json).total) : undefined;
      this.costMicroUsd = cost === undefined ? null : addCapped(this.costMicroUsd, cost);
    }
  }

  private toolStart(event: Json): void {
    this.toolCalls += 1;
    const name = clean(event.toolName, MAX_TOOL_CHARS);
    const args = event.args !== null && typeof event.args === "object" ? (event.args as Json) : {};
    const detail = PATH_TOOLS.has(name) ? relativePath(args.path ?? args.file_path, this.cwd, MAX_DETAIL_CHARS) : "";
    if (typeof event.toolCallId === "string" && this.openTools.size < MAX_OPEN_TOOLS) {
      this.openTools.set(event.toolCallId, { name, inputDigest: this.loop !== undefined ? digest(event.args) : "" });
    }
    this.send({ kind: "tool_started", tool: name, detail });
  }

  private toolEnd(event: Json): void {
    const id = event.toolCallId;
    const call = typeof id === "string" ? this.openTools.get(id) : undefined;
    if (call !== undefined) this.openTools.delete(id as string);
    const name = call?.name ?? clean(event.toolName, MAX_TOOL_CHARS);
    const result = event.result !== null && typeof event.result === "object" ? (event.result as Json) : {};
    if (event.isError === true) {
      this.toolErrors += 1;
      if (name === this.envelopeTool) this.envelopeError = firstLine(result.content);
      this.send({ kind: "tool_failed", tool: name });
    } else {
      if (name === this.envelopeTool && result.details !== null && typeof result.details === "object" && !Array.isArray(result.details)) {
        this.envelope = result.details as Json;
        this.envelopeError = null;
      }
      this.send({ kind: "tool_finished", tool: name });
    }
    if (this.loop !== undefined && call !== undefined) {
      this.loop.action(name, actionFingerprint(name, call.inputDigest, digest([event.isError === true, result.content])));
    }
  }

  private entry(entry: unknown): void {
    if (entry === null || typeof entry !== "object") return;
    const e = entry as Json;
    if (e.customType !== INVENTORY_ENTRY || e.data === null || typeof e.data !== "object") return;
    this.inventory = readInventory(e.data);
  }
}

/** An inventory object, as the agentport extension writes it (stream entry or file). */
export function readInventory(data: unknown): Inventory | null {
  if (data === null || typeof data !== "object") return null;
  const d = data as Json;
  const extensions = Array.isArray(d.extensions) ? d.extensions.filter((x): x is string => typeof x === "string").map((x) => clean(x, 80)) : [];
  return { piVersion: clean(d.pi_version, 40), extensions };
}

/** The first line of a tool result's text: pi's own message, before any echo of the arguments. */
function firstLine(content: unknown): string {
  if (!Array.isArray(content)) return "";
  const text = content.find((b) => b !== null && typeof b === "object" && typeof (b as Json).text === "string") as Json | undefined;
  if (text === undefined) return "";
  const body = (text.text as string).split("\n\nReceived arguments")[0] ?? "";
  return clean(body, MAX_VALUE_CHARS * 2);
}
