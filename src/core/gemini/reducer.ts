// The Gemini CLI reducer: one `gemini -p --output-format stream-json`
// invocation, fed one line at a time (gemini 0.61.0, ground truth §2-4). It
// never starts a process, reads a clock or knows a CLI flag.
//
// `init` (the first line) echoes the session id agentport chose. The final
// text exists only as the concatenation of the assistant `message` deltas.
// The verdict is `result.status`, never the exit code: an API error exits
// with the HTTP status modulo 256, a broken or empty stream exits 0 with
// status "error", and a signal exits 0 with no result at all. No cost and no
// stop reason are in the stream: the cost comes from the user's price, else
// null. A call to a tool that is not offered (headless drops every tool whose
// policy would ask) or that the policy denies is a refused request.
import { digest } from "../digest.ts";
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { count } from "../numbers.ts";
import { costMicroUsd, type Price } from "../prices.ts";
import { driftOf, UnknownTypes } from "../drift.ts";
import { MAX_DETAIL_CHARS, MAX_TOOL_CHARS, type ProgressSink } from "../progress.ts";
import { MAX_REFUSED, MAX_VALUE_CHARS, type Reducer, type Reduction, type Summary } from "../reduction.ts";
import { JsonLineReducer } from "../json-lines.ts";
import type { Json } from "../record.ts";
import { clean, relativePath } from "../text.ts";
import type { Refused, Tokens } from "../verdict.ts";
import type { GeminiMessage, GeminiRecord, GeminiResult, GeminiToolResult, GeminiToolUse } from "./events.ts";

export interface GeminiReducerOptions {
  cwd?: string;
  emit?: ProgressSink;
  loop?: LoopObserver;
  price?: Price | null;
}

export interface GeminiReading extends Reduction {
  /** The model the result's stats name (the last one, when the router added its own). */
  observedModel: string | null;
  /** The result record arrived. */
  hasResult: boolean;
}

// Tool results that mean the call was refused, not that the tool failed.
const REFUSALS: Readonly<Record<string, string>> = {
  tool_not_registered: "not offered",
  policy_violation: "denied by policy",
};
const PATH_TOOLS = new Set(["read_file", "write_file", "replace", "list_directory", "read_many_files"]);
const MAX_OPEN_TOOLS = 1024;
// The rebuilt text is bounded: a reply past it keeps its head.
const MAX_TEXT_CHARS = 4 * 1024 * 1024;

interface OpenTool {
  name: string;
  inputDigest: string;
}

export class GeminiReducer extends JsonLineReducer implements Reducer {
  private readonly cwd: string;
  private readonly loop: LoopObserver | undefined;
  private readonly price: Price | null;

  private sessionId: string | null = null;
  private requestedModel: string | null = null;
  private observedModel: string | null = null;
  private models = "";
  private text = "";
  private deltas = 0;
  private result: "" | "success" | "error" = "";
  private tokens: Tokens | null = null;
  private lastError = "";
  /** The last record is the model's own output (text, a tool call), not a wait for its next answer. */
  private modelSpoke = false;
  private readonly openTools = new Map<string, OpenTool>();
  private readonly refused: Refused[] = [];
  private refusedCount = 0;

  private unknown = 0;
  private readonly unknownTypes = new UnknownTypes();
  /** The result came without the token counts this reducer reads from its stats. */
  private statsMissing = false;
  private warnings = 0;
  private toolCalls = 0;
  private toolErrors = 0;
  private durationMs: number | undefined;

  constructor(options: GeminiReducerOptions = {}) {
    super(options.emit, "gemini: stream-json");
    this.cwd = options.cwd ?? "";
    this.loop = options.loop;
    this.price = options.price ?? null;
  }

  liveOpenTools(): number {
    return this.openTools.size;
  }

  finished(): boolean {
    return this.result !== "";
  }

  streamEnded(): void {
    if (this.result !== "" || this.failure !== null) return;
    this.fail(this.sessionId === null ? "gemini: exited without an init record" : "gemini: exited without a result record", "no_result");
  }

  settled(): boolean {
    return this.result !== "";
  }

  reduction(): GeminiReading {
    const summary: Summary = {
      records: this.records,
      oversize_records: this.oversizeLines,
      unknown_events: this.unknown,
      text_deltas: this.deltas,
      warnings: this.warnings,
      tool_calls: this.toolCalls,
      tool_errors: this.toolErrors,
      refused_requests: this.refusedCount,
    };
    if (this.result) summary.result_status = this.result;
    if (this.requestedModel) summary.requested_model = this.requestedModel;
    if (this.models) summary.models = this.models;
    if (this.durationMs !== undefined) summary.duration_ms = this.durationMs;
    return {
      text: this.failure === null && this.result === "success" ? this.text : null,
      failure: this.failed(),
      finished: this.result !== "",
      toolCalls: this.toolCalls,
      pendingRetryError: null,
      awaitingModel: !this.modelSpoke,
      sessionId: this.sessionId,
      model: this.observedModel,
      stopReason: null,
      costMicroUsd: this.liveCost(),
      costDerived: true,
      tokens: this.tokens,
      drift: driftOf(
        this.unknownTypes,
        this.failureKind === "no_result" && this.failure !== null ? ["result"] : [],
        this.statsMissing ? ["result.stats.input_tokens"] : [],
      ),
      refused: [...this.refused],
      summary,
      observedModel: this.observedModel,
      hasResult: this.result !== "",
    };
  }

  liveTokens(): Tokens | null {
    return this.tokens;
  }

  liveCost(): number | null {
    return costMicroUsd(this.tokens, this.price);
  }

  // -- internals ---------------------------------------------------------------

  protected reading(): boolean {
    return this.failure === null || this.result !== "";
  }

  protected observe(raw: Json & { type: string }): void {
    const record = raw as GeminiRecord;
    switch (record.type) {
      case "init":
        if (this.sessionId === null) this.sessionId = clean(record.session_id, MAX_VALUE_CHARS) || null;
        this.requestedModel = clean(record.model, MAX_VALUE_CHARS) || null;
        this.send({ kind: "started" });
        return;
      case "message":
        this.message(record);
        return;
      case "tool_use":
        this.toolUse(record);
        return;
      case "tool_result":
        this.toolResult(record);
        return;
      case "error":
        // Non-fatal notices (an empty reply, a cut stream, a loop): the result decides.
        this.warnings += 1;
        if (record.severity === "error") this.lastError = clean(record.message, MAX_VALUE_CHARS * 2);
        this.send({ kind: "activity" });
        return;
      case "result":
        this.takeResult(record);
        return;
      default:
        this.unknown += 1;
        this.unknownTypes.add(raw.type);
        this.send({ kind: "activity" });
    }
  }

  private message(record: GeminiMessage): void {
    this.modelSpoke = record.role === "assistant";
    if (record.role !== "assistant" || typeof record.content !== "string") {
      this.send({ kind: "activity" });
      return;
    }
    if (this.deltas === 0) this.send({ kind: "assistant_text" });
    else this.send({ kind: "activity" });
    this.deltas += 1;
    if (this.text.length < MAX_TEXT_CHARS) this.text += record.content.slice(0, MAX_TEXT_CHARS - this.text.length);
  }

  private toolUse(record: GeminiToolUse): void {
    this.modelSpoke = true;
    this.toolCalls += 1;
    const name = clean(record.tool_name, MAX_TOOL_CHARS);
    const params = record.parameters !== null && typeof record.parameters === "object" ? (record.parameters as Json) : {};
    const detail = PATH_TOOLS.has(name) ? relativePath(params.file_path ?? params.dir_path ?? params.path, this.cwd, MAX_DETAIL_CHARS) : "";
    if (typeof record.tool_id === "string" && this.openTools.size < MAX_OPEN_TOOLS) {
      this.openTools.set(record.tool_id, { name, inputDigest: this.loop !== undefined ? digest(record.parameters) : "" });
    }
    // Text after a tool call is a new reply: the final text is the last one's.
    this.text = "";
    this.send({ kind: "tool_started", tool: name, detail });
  }

  private toolResult(record: GeminiToolResult): void {
    // The result goes back to the model: gemini awaits its next answer (and may retry for it).
    this.modelSpoke = false;
    const id = typeof record.tool_id === "string" ? record.tool_id : "";
    const call = this.openTools.get(id);
    this.openTools.delete(id);
    // tool_id is `<name>__<callId>`.
    const name = call?.name ?? clean(id.split("__")[0], MAX_TOOL_CHARS);
    const error = record.error !== null && typeof record.error === "object" ? (record.error as Json) : null;
    if (record.status === "success") {
      this.send({ kind: "tool_finished", tool: name });
    } else {
      this.toolErrors += 1;
      const refusal = error === null ? undefined : REFUSALS[clean(error.type, 40)];
      if (refusal !== undefined) {
        this.refusedCount += 1;
        if (this.refused.length < MAX_REFUSED) this.refused.push({ kind: "permission", subject: `${name} (${refusal})` });
      }
      this.send({ kind: "tool_failed", tool: name });
    }
    if (this.loop !== undefined && call !== undefined) {
      this.loop.action(name, actionFingerprint(name, call.inputDigest, digest([record.status, record.output])));
    }
  }

  private takeResult(record: GeminiResult): void {
    this.result = record.status === "success" ? "success" : "error";
    this.takeStats(record.stats);
    if (this.result === "success") {
      this.loop?.turn(this.text ? digest(this.text) : undefined);
      this.send({ kind: "activity" });
      return;
    }
    const error = record.error !== null && typeof record.error === "object" ? (record.error as Json) : {};
    const message = clean(error.message, MAX_VALUE_CHARS * 3) || this.lastError;
    this.failure = null;
    this.fail(`gemini: the run ended in an error${message ? `: ${message}` : ""}`, "provider_error");
    this.send({ kind: "activity" });
  }

  private takeStats(value: unknown): void {
    this.statsMissing = true;
    if (value === null || typeof value !== "object") return;
    const stats = value as Json;
    const inputTotal = count(stats.input_tokens);
    const output = count(stats.output_tokens);
    this.statsMissing = inputTotal === undefined || output === undefined;
    if (inputTotal !== undefined && output !== undefined) {
      const cached = Math.min(inputTotal, count(stats.cached) ?? 0);
      this.tokens = { input: inputTotal - cached, output, cache_read: cached, cache_write: 0 };
    }
    this.durationMs = count(stats.duration_ms);
    if (stats.models !== null && typeof stats.models === "object") {
      const names = Object.keys(stats.models as Json)
        .map((m) => clean(m, MAX_VALUE_CHARS))
        .filter(Boolean);
      this.models = clean(names.join(","), MAX_VALUE_CHARS);
      this.observedModel = names[names.length - 1] ?? null;
    }
  }
}
