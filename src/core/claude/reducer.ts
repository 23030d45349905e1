// The Claude Code stream-json reducer: one `claude -p --output-format
// stream-json --verbose` invocation, fed one line at a time through the
// shared line reducer (scanned-lines.ts). It never starts a process, reads a
// clock or knows a CLI flag.
//
// Which turn a record belongs to: turns.ts; a result is read by result.ts.
// Hook records may come before `system/init`. Records after the last result
// that open no turn are counted and ignored.
import { digest } from "../digest.ts";
import { driftOf, UnknownTypes } from "../drift.ts";
import type { LoopObserver } from "../loop.ts";
import { count } from "../numbers.ts";
import type { ProgressSink } from "../progress.ts";
import { MAX_VALUE_CHARS, type Reducer, type Reduction, type Summary } from "../reduction.ts";
import type { Json } from "../record.ts";
import { ScannedLineReducer } from "../scanned-lines.ts";
import { clean } from "../text.ts";
import type { Tokens } from "../verdict.ts";
import { ClaudeBills } from "./bill.ts";
import type { ClaudeAssistant, ClaudeRecord, ClaudeResult, ClaudeSystem, ClaudeUser } from "./events.ts";
import { CLAUDE_PLAN } from "./plan.ts";
import { readResult } from "./result.ts";
import { ClaudeTurns } from "./turns.ts";
import { ClaudeToolCalls } from "./tool-calls.ts";

// Record types that are activity only; any other unknown type is counted.
const ACTIVITY_TYPES = new Set(["rate_limit_event", "stream_event"]);

export interface ClaudeReducerOptions {
  cwd?: string;
  emit?: ProgressSink;
  loop?: LoopObserver;
}

export class ClaudeReducer extends ScannedLineReducer implements Reducer {
  private readonly loop: LoopObserver | undefined;
  private readonly bills = new ClaudeBills();
  private readonly tools: ClaudeToolCalls;

  private text: string | null = null;
  private sessionId: string | null = null;
  private model: string | null = null;
  private lastRetryError = "";
  /** The api_retry category no answer has followed yet. */
  private pendingRetry: string | null = null;

  private readonly turns = new ClaudeTurns();
  private stopReason: string | null = null;
  private lastResult: Summary = {};

  private unknown = 0;
  private readonly unknownTypes = new UnknownTypes();
  private claudeVersion = "";
  private afterResult = 0;
  private retries = 0;
  /** The last rate_limit_event said `rejected`: a usage limit, not a transient 429. */
  private wall: { resetsAtMs: number | null } | null = null;

  constructor(options: ClaudeReducerOptions = {}) {
    super(options.emit, "claude: stream-json", CLAUDE_PLAN, options.loop !== undefined);
    this.loop = options.loop;
    this.tools = new ClaudeToolCalls(options.cwd ?? "", options.loop, (event) => this.send(event));
  }

  protected reading(): boolean {
    return this.failure === null;
  }

  protected observe(record: Json & { type: string }): void {
    const json = record as ClaudeRecord;
    const kind = record.type;
    // Before or after the result: the usage limit's word stands either way.
    if (json.type === "rate_limit_event") this.rateLimit(json.rate_limit_info);
    if (json.type === "result") {
      if (this.turns.result(json)) {
        this.takeResult(json);
        // The result's cost and tokens, told before the next turn (or the verdict).
        this.send({ kind: "activity" });
      } else this.protocol("a result event outside a turn");
      return;
    }
    const isInit = json.type === "system" && json.subtype === "init";
    if (!this.turns.place(kind, isInit)) {
      this.afterResult += 1;
      return;
    }
    if (json.type === "system") this.system(json);
    else if (json.type === "assistant") this.assistant(json);
    else if (json.type === "user") this.user(json);
    else {
      if (!ACTIVITY_TYPES.has(kind)) {
        this.unknown += 1;
        this.unknownTypes.add(kind);
      }
      this.send({ kind: "activity" });
    }
  }

  /** Every turn so far has its result: the stream is complete, whatever comes after. */
  settled(): boolean {
    return this.turns.results > 0 && this.turns.closed;
  }

  liveOpenTools(): number {
    return this.tools.openCount;
  }

  finished(): boolean {
    return this.settled();
  }

  streamEnded(): void {
    if (this.failure !== null) return;
    const tail = this.badTail === null ? "" : `; ${this.badTail}`;
    if (this.turns.closed) {
      if (this.badTail !== null) this.protocol(this.badTail);
      return;
    }
    if (this.turns.results > 0) {
      this.fail(`claude: no result record: exited inside a turn that has no result event${tail}`, "no_result");
      return;
    }
    let reason = `claude: no result record: exited without a result event${tail}`;
    if (this.oversizeLines > 0) {
      reason += ` (${this.oversizeLines} line(s) past the per-line bound were skipped; the result must arrive whole in one line)`;
    }
    this.fail(reason, "no_result");
  }

  reduction(): Reduction {
    const summary: Summary = {
      ...this.lastResult,
      results: this.turns.results,
      records: this.records,
      oversize_records: this.oversizeLines,
      unknown_events: this.unknown,
      records_after_result: this.afterResult,
      tool_calls: this.tools.calls,
      tool_errors: this.tools.errors,
      api_retries: this.retries,
      refused_requests: this.tools.refusedCount,
    };
    for (const [key, total] of this.turns.counts()) summary[key] = total;
    if (this.model !== null) summary.model = this.model;
    if (this.claudeVersion) summary.agent_version = this.claudeVersion;
    if (this.lastRetryError) summary.last_retry_error = this.lastRetryError;
    if (this.blankLines > 0) summary.blank_lines = this.blankLines;
    if (this.unterminatedLast) summary.unterminated_last_line = true;
    if (this.bills.sessions > 1) summary.sessions = this.bills.sessions;
    const mismatch = this.bills.mismatch();
    if (mismatch !== null) summary.cost_mismatch = mismatch;
    const failure = this.failed();
    return {
      text: failure === null ? this.text : null,
      failure,
      finished: this.finished(),
      toolCalls: this.tools.calls,
      pendingRetryError: this.pendingRetry,
      sessionId: this.sessionId,
      model: this.model,
      stopReason: this.stopReason,
      costMicroUsd: this.liveCost(),
      // Before any result: the running totals the assistant messages showed (a stopped run keeps them; the judge marks them partial).
      tokens: this.turns.results > 0 ? this.bills.billed() : this.bills.sampled(),
      refused: [...this.tools.refused],
      ...(this.wall === null ? {} : { wall: { ...this.wall } }),
      drift: failure?.kind === "no_result" ? driftOf(this.unknownTypes, ["result"]) : undefined,
      summary,
    };
  }

  /** claude reports its cost only in a result: the results' so far, for --max-cost. */
  liveCost(): number | null {
    return this.turns.results > 0 ? this.bills.cost() : null;
  }

  costSilent(): string | null {
    return this.turns.results > 0 && this.liveCost() === null ? "claude's result carried no total_cost_usd" : null;
  }

  liveTokens(): Tokens | null {
    return this.bills.running(this.turns.results > 0 ? this.bills.billed() : null);
  }

  // -- internals ---------------------------------------------------------------

  /** The session the records are about now: the last one named wins (a stream may hold two). */
  private takeSession(value: unknown): void {
    const id = typeof value === "string" ? clean(value, MAX_VALUE_CHARS) : "";
    if (id) this.sessionId = id;
  }

  private takeResult(record: ClaudeResult): void {
    this.takeSession(record.session_id);
    const { facts, apiStatus, stopReason, outcome } = readResult(record);
    this.stopReason = stopReason;
    this.lastResult = facts;
    this.pendingRetry = null;
    // total_cost_usd and modelUsage are the session's so far: the last result's stand.
    this.bills.result(this.sessionId, record);
    const denials = this.tools.denials(record.permission_denials);
    if (denials !== undefined) this.lastResult.permission_denials = denials;
    if (apiStatus !== undefined) this.lastResult.api_error_status = apiStatus;
    if (outcome.kind === "failed") this.fail(outcome.reason, outcome.failure);
    else if (outcome.kind === "protocol") this.protocol(outcome.what);
    else this.text = outcome.text;
  }

  /** A rate_limit_event: `rejected` is the wall (a later `allowed` lifts it); resetsAt is epoch seconds. */
  private rateLimit(info: unknown): void {
    if (info === null || typeof info !== "object") return;
    const i = info as Json;
    if (i.status !== "rejected") {
      if (i.status === "allowed" || i.status === "allowed_warning") this.wall = null;
      return;
    }
    const resetsAt = count(i.resetsAt);
    this.wall = { resetsAtMs: resetsAt === undefined ? null : resetsAt * 1000 };
  }

  private system(record: ClaudeSystem): void {
    switch (record.subtype) {
      case "init": {
        this.takeSession(record.session_id);
        const model = clean(record.model, MAX_VALUE_CHARS);
        if (model) this.model = model;
        this.claudeVersion = clean(record.claude_code_version, MAX_VALUE_CHARS) || this.claudeVersion;
        this.send({ kind: "started", detail: model });
        return;
      }
      case "thinking_tokens":
        this.send({ kind: "thinking", thinking_tokens: count(record.estimated_tokens) ?? 0 });
        return;
      case "api_retry": {
        this.retries += 1;
        this.lastRetryError = clean(record.error, MAX_VALUE_CHARS);
        this.pendingRetry = this.lastRetryError || null;
        this.loop?.retry();
        const attempt = count(record.attempt);
        const limit = count(record.max_retries);
        const detail = attempt === undefined ? "" : `attempt ${attempt}${limit === undefined ? "" : ` of ${limit}`}`;
        this.send({ kind: "provider_retry", detail });
        return;
      }
      case "permission_denied":
        this.tools.denied(record);
        this.send({ kind: "activity" });
        return;
      default:
        // Hooks, status and compaction notices: liveness only. A hook's output
        // is the operator's and is never shown.
        this.send({ kind: "activity" });
    }
  }

  private static blocks(record: ClaudeAssistant | ClaudeUser): Json[] {
    const message = record.message;
    const content = message !== null && typeof message === "object" ? (message as Json).content : undefined;
    if (!Array.isArray(content)) return [];
    return content.filter((block): block is Json => block !== null && typeof block === "object");
  }

  private assistant(record: ClaudeAssistant): void {
    // An answer after a retry: the retry worked (the synthetic error record of a failure carries `error`).
    if (record.error === undefined) this.pendingRetry = null;
    this.bills.sample(record.message);
    let sent = false;
    let textDigest: string | undefined;
    for (const block of ClaudeReducer.blocks(record)) {
      const kind = block.type;
      if (kind === "thinking") this.send({ kind: "thinking" });
      else if (kind === "text") {
        if (this.loop !== undefined) textDigest = digest(block.text);
        this.send({ kind: "assistant_text" });
      } else if (kind === "tool_use") this.tools.started(block);
      else continue;
      sent = true;
    }
    if (!sent) this.send({ kind: "activity" });
    this.loop?.turn(textDigest);
  }

  private user(record: ClaudeUser): void {
    let sent = false;
    for (const block of ClaudeReducer.blocks(record)) {
      if (block.type !== "tool_result") continue;
      this.tools.finished(block);
      sent = true;
    }
    if (!sent) this.send({ kind: "activity" });
  }
}
