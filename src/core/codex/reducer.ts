// The Codex CLI reducer: one `codex exec --json` invocation, fed one line at a
// time (codex 0.169.0, ground truth §2-4). It never starts a process, reads a
// clock or knows a CLI flag.
//
// `thread.started` (the first line) carries the thread id, which the caller
// cannot choose. `turn.completed` is success, `turn.failed` failure with its
// message; neither means the process was ended. The final text is the last
// `agent_message` item. The tokens are the phase's share of the thread's
// running total (bill.ts). No cost, model or stop reason is in the stream:
// the cost comes from the user's price, else null.
//
// Refused tool calls leave no record in the stream, only an
// `ERROR codex_core::tools::router` line on stderr: the phase hands stderr
// over once the process is gone (`takeStderr`), and those lines become the
// refused requests. Without stderr (a replay), only `declined` command items
// are counted, and the summary says where the count came from.
import { digest } from "../digest.ts";
import { driftOf, UnknownTypes } from "../drift.ts";
import { JsonLineReducer } from "../json-lines.ts";
import type { LoopObserver } from "../loop.ts";
import { costMicroUsd, type Price } from "../prices.ts";
import type { ProgressSink } from "../progress.ts";
import { MAX_VALUE_CHARS, type Reducer, type Reduction, type Summary } from "../reduction.ts";
import { objectOf, type Json } from "../record.ts";
import { clean } from "../text.ts";
import type { Refused, Tokens } from "../verdict.ts";
import { CodexBill } from "./bill.ts";
import type { CodexItem, CodexRecord } from "./events.ts";
import { CodexRetries } from "./retries.ts";
import { routerRefusals } from "./stderr.ts";
import { CodexToolCalls } from "./tool-calls.ts";

export interface CodexReducerOptions {
  cwd?: string;
  emit?: ProgressSink;
  loop?: LoopObserver;
  /** The thread's token total before this phase (the earlier phases'), subtracted from codex's running total. */
  previous?: Tokens | null;
  /** The price of the model, when the user gave one. */
  price?: Price | null;
  /** Called once, when thread.started names the thread. */
  onThread?: (threadId: string) => void;
}

/** What the codex stream says, before the process outcome is weighed in. */
export interface CodexReading extends Reduction {
  /** The thread id from thread.started, null when it never came. */
  threadId: string | null;
  /** The run ended its last retry notice waiting for the network ("Reconnecting... waiting for network"). */
  waitingForNetwork: boolean;
  /** codex's running total for the thread, as the last turn.completed gave it. */
  threadTotal: Tokens | null;
}

// codex's fixed text for an exhausted 5xx (it replaces the server's message).
const HIGH_DEMAND = "experiencing high demand";

export class CodexReducer extends JsonLineReducer implements Reducer {
  private readonly loop: LoopObserver | undefined;
  private readonly bill: CodexBill;
  private readonly tools: CodexToolCalls;
  private readonly price: Price | null;
  private readonly onThread: CodexReducerOptions["onThread"];

  private threadId: string | null = null;
  private text: string | null = null;
  private ended: "" | "completed" | "failed" = "";
  private readonly retries = new CodexRetries();
  private stderrRefused: Refused[] | null = null;
  private stderrRefusedCount = 0;

  private unknown = 0;
  private readonly unknownTypes = new UnknownTypes();
  private turns = 0;
  private messages = 0;
  private warnings = 0;

  constructor(options: CodexReducerOptions = {}) {
    super(options.emit, "codex: json");
    this.loop = options.loop;
    this.bill = new CodexBill(options.previous);
    this.tools = new CodexToolCalls(options.cwd ?? "", options.loop, (event) => this.send(event));
    this.price = options.price ?? null;
    this.onThread = options.onThread;
  }

  liveOpenTools(): number {
    return this.tools.openCount;
  }

  finished(): boolean {
    return this.ended !== "";
  }

  streamEnded(): void {
    if (this.ended !== "" || this.failure !== null) return;
    this.fail(
      this.threadId === null ? "codex: exited without starting a thread" : "codex: exited without turn.completed or turn.failed",
      "no_result",
    );
  }

  /** The turn has its end record: nothing more is coming. */
  settled(): boolean {
    return this.ended !== "";
  }

  /** codex's stderr, once the process is gone: its tool-router errors are the refused requests. */
  takeStderr(stderr: string): void {
    const found = routerRefusals(stderr);
    this.stderrRefused = found.refused;
    this.stderrRefusedCount = found.count;
  }

  reduction(): CodexReading {
    const tokens = this.bill.phase();
    const fromStderr = this.stderrRefused !== null;
    const summary: Summary = {
      records: this.records,
      oversize_records: this.oversizeLines,
      unknown_events: this.unknown,
      turns: this.turns,
      agent_messages: this.messages,
      warnings: this.warnings,
      tool_calls: this.tools.calls,
      tool_errors: this.tools.errors,
      api_retries: this.retries.count,
      refused_requests: fromStderr ? this.stderrRefusedCount : this.tools.declinedCount,
      // Refusals leave no stream record: only stderr has them all.
      refused_seen_in: fromStderr ? "stderr" : "stream",
      reasoning_tokens: this.bill.reasoningTokens,
    };
    if (this.threadId !== null) summary.thread_id = this.threadId;
    if (this.retries.last) summary.last_retry_error = this.retries.last;
    if (this.retries.waitingForNetwork) summary.waiting_for_network = true;
    const threadTotal = this.bill.threadTotal;
    if (threadTotal !== null) summary.thread_input_tokens = threadTotal.input + threadTotal.cache_read;
    const apiStatus = this.apiStatus();
    if (apiStatus !== null) summary.api_error_status = apiStatus;
    return {
      text: this.failure === null ? this.text : null,
      failure: this.failed(),
      finished: this.ended !== "",
      toolCalls: this.tools.calls,
      pendingRetryError: this.ended === "" && this.retries.retrying ? this.retries.last : null,
      sessionId: this.threadId,
      model: null,
      stopReason: null,
      costMicroUsd: this.liveCost(),
      costDerived: true,
      tokens,
      drift: driftOf(
        this.unknownTypes,
        this.failureKind === "no_result" && this.failure !== null ? ["turn.completed"] : [],
        this.bill.usageMissing ? ["turn.completed.usage"] : [],
      ),
      refused: fromStderr ? [...(this.stderrRefused ?? [])] : [...this.tools.declined],
      summary,
      threadId: this.threadId,
      waitingForNetwork: this.retries.waitingForNetwork,
      threadTotal,
    };
  }

  liveTokens(): Tokens | null {
    return this.bill.phase();
  }

  liveCost(): number | null {
    return costMicroUsd(this.bill.phase(), this.price);
  }

  // -- internals ---------------------------------------------------------------

  /** The HTTP status the failure names ("unexpected status 401"), or 500 for codex's exhausted-5xx text. */
  private apiStatus(): number | null {
    if (this.failure === null) return null;
    const named = /unexpected status (\d{3})\b/.exec(this.failure);
    if (named) return Number(named[1]);
    return this.failure.includes(HIGH_DEMAND) ? 500 : null;
  }

  protected reading(): boolean {
    return this.failure === null || this.ended !== "";
  }

  protected observe(raw: Json & { type: string }): void {
    const record = raw as CodexRecord;
    switch (record.type) {
      case "thread.started":
        this.threadStarted(record.thread_id);
        return;
      case "turn.started":
        this.turns += 1;
        this.send({ kind: "activity" });
        return;
      case "item.started":
        this.itemStarted(record.item);
        return;
      case "item.completed":
        this.itemCompleted(record.item);
        return;
      case "item.updated":
        this.send({ kind: "activity" });
        return;
      case "error":
        this.notice(clean(record.message, MAX_VALUE_CHARS * 2));
        return;
      case "turn.completed":
        this.ended = "completed";
        this.bill.take(record.usage);
        // No agent message is the judge's to rule on (empty answer, unless a tool ran), as for every agent.
        this.send({ kind: "activity" });
        return;
      case "turn.failed": {
        this.ended = "failed";
        const error = record.error !== null && typeof record.error === "object" ? (record.error as Json) : {};
        const message = clean(error.message, MAX_VALUE_CHARS * 3);
        this.failure = null;
        this.fail(`codex: the turn failed${message ? `: ${message}` : ""}`, "provider_error");
        this.send({ kind: "activity" });
        return;
      }
      default:
        this.unknown += 1;
        this.unknownTypes.add(raw.type);
        this.send({ kind: "activity" });
    }
  }

  private threadStarted(value: unknown): void {
    const id = clean(value, MAX_VALUE_CHARS);
    if (!id || this.threadId !== null) return;
    this.threadId = id;
    this.onThread?.(id);
    this.send({ kind: "started" });
  }

  /** A top-level error: a retry notice ("Reconnecting... 1/2 (why)") or the final error before turn.failed. */
  private notice(message: string): void {
    const detail = this.retries.notice(message);
    if (detail === null) {
      this.send({ kind: "activity" });
      return;
    }
    this.loop?.retry();
    this.send({ kind: "provider_retry", detail });
  }

  private itemStarted(value: unknown): void {
    const item = objectOf(value);
    this.retries.answered();
    const tool = item === null ? undefined : CodexToolCalls.toolOf(item);
    if (item === null || tool === undefined) {
      this.send({ kind: "activity" });
      return;
    }
    this.tools.started(item, tool);
  }

  private itemCompleted(value: unknown): void {
    const item = objectOf(value);
    if (item === null) {
      this.send({ kind: "activity" });
      return;
    }
    // Any item but a warning is the model's answer arriving: the retry before it worked.
    if (item.type !== "error") this.retries.answered();
    const known = item as CodexItem;
    switch (known.type) {
      case "agent_message": {
        this.messages += 1;
        const text = typeof known.text === "string" ? known.text : "";
        this.text = text;
        this.loop?.turn(text ? digest(text) : undefined);
        this.send({ kind: "assistant_text" });
        return;
      }
      case "reasoning":
        this.send({ kind: "thinking" });
        return;
      case "error":
        // A warning (unknown model metadata, …): the run goes on.
        this.warnings += 1;
        this.send({ kind: "activity" });
        return;
    }
    const tool = CodexToolCalls.toolOf(item);
    if (tool === undefined) {
      this.unknown += 1;
      this.send({ kind: "activity" });
      return;
    }
    this.tools.completed(item, tool);
  }
}
