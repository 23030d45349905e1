// The Claude Code stream-json reducer: one `claude -p --output-format
// stream-json --verbose` invocation, fed one line at a time. It never starts a
// process, reads a clock or knows a CLI flag.
//
// Turns (claude 2.1.197, ground truth §2-4): the first turn opens with the
// stream; a later one opens with its own `system/init` or, when every turn so
// far is closed, with an `assistant`/`user` record. The n-th `result` closes
// the n-th turn. Hook records may come before `system/init`. Records after the
// last result that open no turn are counted and ignored.
//
// Every `result` is checked: `is_error` first (an API failure is
// `subtype:"success"` with `is_error:true`), then `subtype` must be `success`,
// then `result` must be a string. Error subtypes carry `errors[]` instead of
// `result`, and those become the failure reason.
import { digest } from "../digest.ts";
import { failure, type Failure, type FailureKind } from "../failure.ts";
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { addCapped, count, microUsd } from "../numbers.ts";
import { MAX_DETAIL_CHARS, MAX_TOOL_CHARS, withRunning, type ProgressEvent, type ProgressSink } from "../progress.ts";
import {
  MAX_REASON_CHARS,
  MAX_REFUSED,
  MAX_SUBJECT_CHARS,
  MAX_VALUE_CHARS,
  type Reducer,
  type Reduction,
  type Summary,
} from "../reduction.ts";
import { parseRecord, type Json, type Parsed } from "../record.ts";
import { RecordScanner } from "../scan.ts";
import { clean, relativePath } from "../text.ts";
import type { Refused, Tokens } from "../verdict.ts";
import { CLAUDE_PLAN } from "./plan.ts";
import { driftOf, UnknownTypes } from "../drift.ts";
import { PATH_INPUTS, QUESTION_TOOL, TOOL_DETAILS } from "./tools.ts";

// Tool calls whose result has not arrived yet, kept to name a failed tool and
// to fingerprint the call once it completes. Past the bound a result is still
// counted, only not named.
const MAX_OPEN_TOOLS = 1024;
// Record types that are activity only; any other unknown type is counted.
const ACTIVITY_TYPES = new Set(["rate_limit_event", "stream_event"]);
const PER_TURN_COUNTS = ["num_turns", "duration_ms"] as const;
const ZERO: Tokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };

/** One session's bill: claude's cost and modelUsage are the session's so far, so the last result's stand. */
interface SessionBill {
  costMicroUsd: number | null;
  /** modelUsage's costUSD summed over models, from the last result: checked against costMicroUsd. */
  modelCostMicroUsd: number | null;
  /** modelUsage summed over models, from the last result that had it. */
  modelTokens: Tokens | null;
  /** `usage` summed over this session's results (the fallback: it leaves out side calls). */
  usageTokens: Tokens | null;
}

function addTokens(a: Tokens, b: Tokens): Tokens {
  return {
    input: addCapped(a.input, b.input),
    output: addCapped(a.output, b.output),
    cache_read: addCapped(a.cache_read, b.cache_read),
    cache_write: addCapped(a.cache_write, b.cache_write),
  };
}

interface OpenTool {
  name: string;
  inputDigest: string;
  detail: string;
}

export interface ClaudeReducerOptions {
  cwd?: string;
  emit?: ProgressSink;
  loop?: LoopObserver;
}

/** claude's own limits (--max-turns, --max-budget-usd), by result subtype. */
const CLAUDE_LIMITS: Readonly<Record<string, FailureKind>> = { error_max_turns: "turn_limit", error_max_budget_usd: "budget_limit" };

export class ClaudeReducer implements Reducer {
  private readonly cwd: string;
  private readonly emit: ProgressSink | undefined;
  private readonly loop: LoopObserver | undefined;
  private readonly scanner = new RecordScanner(CLAUDE_PLAN);

  private text: string | null = null;
  private failure: Failure | null = null;
  /** An unterminated last line that is no whole record. */
  private badTail: string | null = null;
  private unterminatedLast = false;
  private sessionId: string | null = null;
  private model: string | null = null;
  private lastRetryError = "";
  /** The api_retry category no answer has followed yet. */
  private pendingRetry: string | null = null;
  private readonly bills = new Map<string, SessionBill>();
  // Usage as the stream goes, for the budget guard: each API response once
  // (its records share message.id), until the results give the real figures.
  private readonly liveIds = new Set<string>();
  private live: Tokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };

  private turns = 1;
  private turnHasInit = false;
  private results = 0;
  private perTurn = new Map<string, number>(PER_TURN_COUNTS.map((key) => [key, 0]));
  private stopReason: string | null = null;
  private lastResult: Summary = {};

  private readonly openTools = new Map<string, OpenTool>();
  private readonly refused: Refused[] = [];
  private readonly refusedIds = new Set<string>();
  private refusedCount = 0;

  private records = 0;
  private oversizeLines = 0;
  private unknown = 0;
  private readonly unknownTypes = new UnknownTypes();
  private claudeVersion = "";
  private afterResult = 0;
  private blankLines = 0;
  private toolCalls = 0;
  private toolErrors = 0;
  private retries = 0;
  /** The last rate_limit_event said `rejected`: a usage limit, not a transient 429. */
  private wall: { resetsAtMs: number | null } | null = null;

  constructor(options: ClaudeReducerOptions = {}) {
    this.cwd = options.cwd ?? "";
    this.emit = options.emit;
    this.loop = options.loop;
  }

  // -- the framer's side -----------------------------------------------------

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
      this.protocol(parsed.why);
      return;
    }
    const json = parsed.record;
    const kind = json.type;
    // Before or after the result: the usage limit's word stands either way.
    if (kind === "rate_limit_event") this.rateLimit(json.rate_limit_info);
    if (kind === "result") {
      if (this.results < this.turns) {
        this.takeResult(json);
        // The result's cost and tokens, told before the next turn (or the verdict).
        this.send({ kind: "activity" });
      } else this.protocol("a result event outside a turn");
      return;
    }
    const isInit = kind === "system" && json.subtype === "init";
    if (this.results === this.turns) {
      if (kind !== "assistant" && kind !== "user" && !isInit) {
        this.afterResult += 1;
        return;
      }
      this.turns += 1;
      this.turnHasInit = isInit;
    } else if (isInit) {
      if (this.turnHasInit) this.turns += 1;
      this.turnHasInit = true;
    }
    this.observe(kind, json);
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

  /** Every turn so far has its result: the stream is complete, whatever comes after. */
  settled(): boolean {
    return this.results > 0 && this.results === this.turns;
  }

  finished(): boolean {
    return this.settled();
  }

  streamEnded(): void {
    if (this.failure !== null) return;
    const tail = this.badTail === null ? "" : `; ${this.badTail}`;
    if (this.results === this.turns) {
      if (this.badTail !== null) this.protocol(this.badTail);
      return;
    }
    if (this.results > 0) {
      this.fail("no_result", `claude: no result record: exited inside a turn that has no result event${tail}`);
      return;
    }
    let reason = `claude: no result record: exited without a result event${tail}`;
    if (this.oversizeLines > 0) {
      reason += ` (${this.oversizeLines} line(s) past the per-line bound were skipped; the result must arrive whole in one line)`;
    }
    this.fail("no_result", reason);
  }

  reduction(): Reduction {
    const summary: Summary = {
      ...this.lastResult,
      results: this.results,
      records: this.records,
      oversize_records: this.oversizeLines,
      unknown_events: this.unknown,
      records_after_result: this.afterResult,
      tool_calls: this.toolCalls,
      tool_errors: this.toolErrors,
      api_retries: this.retries,
      refused_requests: this.refusedCount,
    };
    if (this.results > 0) for (const [key, total] of this.perTurn) summary[key] = total;
    if (this.model !== null) summary.model = this.model;
    if (this.claudeVersion) summary.agent_version = this.claudeVersion;
    if (this.lastRetryError) summary.last_retry_error = this.lastRetryError;
    if (this.blankLines > 0) summary.blank_lines = this.blankLines;
    if (this.unterminatedLast) summary.unterminated_last_line = true;
    if (this.bills.size > 1) summary.sessions = this.bills.size;
    const bills = [...this.bills.values()];
    const mismatch = costMismatch(bills);
    if (mismatch !== null) summary.cost_mismatch = mismatch;
    return {
      text: this.failure === null ? this.text : null,
      failure: this.failure,
      finished: this.finished(),
      toolCalls: this.toolCalls,
      pendingRetryError: this.pendingRetry,
      sessionId: this.sessionId,
      model: this.model,
      stopReason: this.stopReason,
      costMicroUsd: this.liveCost(),
      // Before any result: the running totals the assistant messages showed (a stopped run keeps them; the judge marks them partial).
      tokens: this.results > 0 ? this.billedTokens(bills) : this.live.input + this.live.output > 0 ? { ...this.live } : null,
      refused: [...this.refused],
      ...(this.wall === null ? {} : { wall: { ...this.wall } }),
      drift: this.failure?.kind === "no_result" ? driftOf(this.unknownTypes, ["result"]) : undefined,
      summary,
    };
  }

  private billedTokens(bills: SessionBill[]): Tokens | null {
    let total: Tokens = ZERO;
    for (const bill of bills) {
      const tokens = bill.modelTokens ?? bill.usageTokens;
      if (tokens === null) return null;
      total = addTokens(total, tokens);
    }
    return total;
  }

  /** claude reports its cost only in a result: the results' so far, for --max-cost. */
  liveCost(): number | null {
    return this.results > 0 ? sumOrNull([...this.bills.values()].map((b) => b.costMicroUsd)) : null;
  }

  costSilent(): string | null {
    return this.results > 0 && this.liveCost() === null ? "claude's result carried no total_cost_usd" : null;
  }

  liveTokens(): Tokens | null {
    const billed = this.results > 0 ? this.billedTokens([...this.bills.values()]) : null;
    if (billed === null) return this.live;
    return {
      input: Math.max(this.live.input, billed.input),
      output: Math.max(this.live.output, billed.output),
      cache_read: Math.max(this.live.cache_read, billed.cache_read),
      cache_write: Math.max(this.live.cache_write, billed.cache_write),
    };
  }

  // -- internals ---------------------------------------------------------------

  private send(event: ProgressEvent): void {
    this.emit?.(withRunning(event, this));
  }

  private fail(kind: FailureKind, reason: string): void {
    if (this.failure === null) this.failure = failure(kind, clean(reason, MAX_REASON_CHARS));
  }

  private protocol(what: string): void {
    this.fail("protocol", `claude: stream-json protocol violation: ${what}`);
  }

  /** The session the records are about now: the last one named wins (a stream may hold two). */
  private takeSession(value: unknown): void {
    const id = typeof value === "string" ? clean(value, MAX_VALUE_CHARS) : "";
    if (id) this.sessionId = id;
  }

  private bill(): SessionBill {
    const key = this.sessionId ?? "";
    let bill = this.bills.get(key);
    if (bill === undefined) {
      bill = { costMicroUsd: null, modelCostMicroUsd: null, modelTokens: null, usageTokens: ZERO };
      this.bills.set(key, bill);
    }
    return bill;
  }

  private takeResult(record: Json): void {
    this.results += 1;
    this.takeSession(record.session_id);
    const subtype = clean(record.subtype, MAX_VALUE_CHARS);
    const isError = record.is_error;
    this.stopReason = clean(record.stop_reason, MAX_VALUE_CHARS) || null;
    const terminal = clean(record.terminal_reason, MAX_VALUE_CHARS);
    this.lastResult = {
      result_subtype: subtype,
      is_error: isError === true,
      terminal_reason: terminal,
      stop_reason: this.stopReason ?? "",
    };
    for (const key of PER_TURN_COUNTS) {
      const total = this.perTurn.get(key);
      const value = count(record[key]);
      if (total === undefined) continue;
      if (value === undefined) this.perTurn.delete(key);
      else this.perTurn.set(key, addCapped(total, value));
    }
    this.pendingRetry = null;
    const bill = this.bill();
    // total_cost_usd and modelUsage are the session's so far: the last result's stand.
    bill.costMicroUsd = microUsd(record.total_cost_usd) ?? null;
    bill.modelTokens = modelUsageTokens(record.modelUsage) ?? bill.modelTokens;
    bill.modelCostMicroUsd = modelUsageCost(record.modelUsage);
    bill.usageTokens = bill.usageTokens === null ? null : usageTokens(record.usage, bill.usageTokens);
    this.takeDenials(record.permission_denials);

    const apiStatus = count(record.api_error_status);
    if (apiStatus !== undefined) this.lastResult.api_error_status = apiStatus;
    if (isError === true) {
      const facts = [`subtype ${subtype || "-"}`];
      if (terminal) facts.push(`terminal_reason ${terminal}`);
      if (apiStatus !== undefined) facts.push(`api_error_status ${apiStatus}`);
      const excerpt = clean(record.result, MAX_VALUE_CHARS * 2) || this.errors(record.errors);
      // An API failure keeps subtype "success"; the error subtypes are claude's own limits.
      const kind: FailureKind = subtype === "success" || apiStatus !== undefined ? "provider_error" : ((Object.hasOwn(CLAUDE_LIMITS, subtype) ? CLAUDE_LIMITS[subtype] : undefined) ?? "agent_error");
      this.fail(kind, `claude: the run ended in an error (${facts.join(", ")})${excerpt ? `: ${excerpt}` : ""}`);
    } else if (isError !== false) {
      this.protocol("the result event has no boolean 'is_error'");
    } else if (subtype !== "success") {
      const errors = this.errors(record.errors);
      this.fail("agent_error", `claude: the run did not succeed (subtype ${subtype || "-"})${errors ? `: ${errors}` : ""}`);
    } else if (typeof record.result !== "string") {
      this.protocol("the result event has no string 'result'");
    } else {
      this.text = record.result;
    }
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

  private errors(value: unknown): string {
    if (!Array.isArray(value)) return "";
    return clean(value.filter((item) => typeof item === "string").slice(0, 4).join("; "), MAX_VALUE_CHARS * 2);
  }

  private takeDenials(denials: unknown): void {
    if (!Array.isArray(denials)) return;
    this.lastResult.permission_denials = denials.length;
    for (const denial of denials) {
      if (denial === null || typeof denial !== "object") continue;
      const d = denial as Json;
      const name = typeof d.tool_name === "string" ? d.tool_name : "";
      this.refuse("permission", d.tool_use_id, name, this.detail(name, d.tool_input));
    }
  }

  private refuse(kind: Refused["kind"], toolId: unknown, name: string, detail: string): void {
    if (typeof toolId === "string") {
      if (this.refusedIds.has(toolId)) return;
      if (this.refusedIds.size < MAX_OPEN_TOOLS) this.refusedIds.add(toolId);
    }
    this.refusedCount += 1;
    if (this.refused.length < MAX_REFUSED) {
      const subject = name && detail ? `${name}: ${detail}` : name;
      this.refused.push({ kind, subject: clean(subject, MAX_SUBJECT_CHARS) });
    }
  }

  private observe(kind: string, record: Json): void {
    if (kind === "system") this.system(record);
    else if (kind === "assistant") this.assistant(record);
    else if (kind === "user") this.user(record);
    else {
      if (!ACTIVITY_TYPES.has(kind)) {
        this.unknown += 1;
        this.unknownTypes.add(kind);
      }
      this.send({ kind: "activity" });
    }
  }

  private system(record: Json): void {
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
      case "permission_denied": {
        // Only on the --permission-prompt-tool stdio path (ground truth §5).
        const toolId = record.tool_use_id;
        const call = typeof toolId === "string" ? this.openTools.get(toolId) : undefined;
        const name = typeof record.tool_name === "string" ? record.tool_name : (call?.name ?? "");
        this.refuse("permission", toolId, name, call?.detail ?? "");
        this.send({ kind: "activity" });
        return;
      }
      default:
        // Hooks, status and compaction notices: liveness only. A hook's output
        // is the operator's and is never shown.
        this.send({ kind: "activity" });
    }
  }

  private static blocks(record: Json): Json[] {
    const message = record.message;
    const content = message !== null && typeof message === "object" ? (message as Json).content : undefined;
    if (!Array.isArray(content)) return [];
    return content.filter((block): block is Json => block !== null && typeof block === "object");
  }

  private assistant(record: Json): void {
    // An answer after a retry: the retry worked (the synthetic error record of a failure carries `error`).
    if (record.error === undefined) this.pendingRetry = null;
    this.sampleUsage(record.message);
    let sent = false;
    let textDigest: string | undefined;
    for (const block of ClaudeReducer.blocks(record)) {
      const kind = block.type;
      if (kind === "thinking") this.send({ kind: "thinking" });
      else if (kind === "text") {
        if (this.loop !== undefined) textDigest = digest(block.text);
        this.send({ kind: "assistant_text" });
      } else if (kind === "tool_use") this.toolUse(block);
      else continue;
      sent = true;
    }
    if (!sent) this.send({ kind: "activity" });
    this.loop?.turn(textDigest);
  }

  private sampleUsage(message: unknown): void {
    if (message === null || typeof message !== "object") return;
    const m = message as Json;
    if (typeof m.id !== "string" || this.liveIds.has(m.id) || this.liveIds.size >= MAX_OPEN_TOOLS * 64) return;
    this.liveIds.add(m.id);
    const u = m.usage !== null && typeof m.usage === "object" ? (m.usage as Json) : {};
    this.live = {
      input: addCapped(this.live.input, count(u.input_tokens) ?? 0),
      output: addCapped(this.live.output, count(u.output_tokens) ?? 0),
      cache_read: addCapped(this.live.cache_read, count(u.cache_read_input_tokens) ?? 0),
      cache_write: addCapped(this.live.cache_write, count(u.cache_creation_input_tokens) ?? 0),
    };
  }

  private toolUse(block: Json): void {
    this.toolCalls += 1;
    const name = clean(block.name, MAX_TOOL_CHARS);
    const detail = this.detail(name, block.input);
    if (typeof block.id === "string" && this.openTools.size < MAX_OPEN_TOOLS) {
      this.openTools.set(block.id, {
        name,
        inputDigest: this.loop !== undefined ? digest(block.input) : "",
        detail,
      });
    }
    this.send({ kind: "tool_started", tool: name, detail });
  }

  /** The one input of `name`'s call shown for it, or "". */
  private detail(name: string, input: unknown): string {
    const field = TOOL_DETAILS[name];
    if (field === undefined || input === null || typeof input !== "object") return "";
    const value = (input as Json)[field];
    if (PATH_INPUTS.has(field)) return relativePath(value, this.cwd, MAX_DETAIL_CHARS);
    return clean(value, MAX_DETAIL_CHARS);
  }

  private user(record: Json): void {
    let sent = false;
    for (const block of ClaudeReducer.blocks(record)) {
      if (block.type !== "tool_result") continue;
      const toolId = block.tool_use_id;
      const call = typeof toolId === "string" ? this.openTools.get(toolId) : undefined;
      if (call !== undefined) this.openTools.delete(toolId as string);
      const name = call?.name ?? "";
      if (block.is_error === true) {
        this.toolErrors += 1;
        // AskUserQuestion is not offered under -p: the question reached no one.
        // Its text is the model's; only the kind is kept.
        if (name === QUESTION_TOOL) this.refuse("question", toolId, QUESTION_TOOL, "");
        this.send({ kind: "tool_failed", tool: name });
      } else {
        this.send({ kind: "tool_finished", tool: name });
      }
      if (this.loop !== undefined && call !== undefined) {
        // The id differs on every call; everything else is the result.
        const { tool_use_id: _id, ...result } = block;
        this.loop.action(name, actionFingerprint(name, call.inputDigest, digest(result)));
      }
      sent = true;
    }
    if (!sent) this.send({ kind: "activity" });
  }
}

function sumOrNull(values: (number | null)[]): number | null {
  if (values.length === 0 || values.some((v) => v === null)) return null;
  return values.reduce<number>((a, v) => addCapped(a, v ?? 0), 0);
}

/** `result.usage` added to `into`; null when the counts are missing (a wrong sum is worse than none). */
function usageTokens(usage: unknown, into: Tokens): Tokens | null {
  const u = usage !== null && typeof usage === "object" ? (usage as Json) : {};
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === undefined || output === undefined) return null;
  return addTokens(into, { input, output, cache_read: count(u.cache_read_input_tokens) ?? 0, cache_write: count(u.cache_creation_input_tokens) ?? 0 });
}

/** `modelUsage` summed over its models (side calls included), or undefined when it has none. */
/** modelUsage's costUSD summed over its models (micro-USD); null when a model lacks it. */
function modelUsageCost(modelUsage: unknown): number | null {
  if (modelUsage === null || typeof modelUsage !== "object" || Array.isArray(modelUsage)) return null;
  const costs = Object.values(modelUsage as Json).map((m) => (m !== null && typeof m === "object" ? (microUsd((m as Json).costUSD) ?? null) : null));
  return sumOrNull(costs);
}

// claude's two figures are rounded apart by at most a few micro-USD.
const MISMATCH_MICRO_USD = 10;

/** total_cost_usd against modelUsage's costUSD, per session: where both are given and they differ, one line saying so. */
function costMismatch(bills: SessionBill[]): string | null {
  const usd = (micro: number) => `$${(micro / 1e6).toFixed(6)}`;
  for (const b of bills) {
    if (b.costMicroUsd === null || b.modelCostMicroUsd === null) continue;
    if (Math.abs(b.costMicroUsd - b.modelCostMicroUsd) > MISMATCH_MICRO_USD) return `total_cost_usd ${usd(b.costMicroUsd)} but modelUsage costUSD sums to ${usd(b.modelCostMicroUsd)}`;
  }
  return null;
}

function modelUsageTokens(modelUsage: unknown): Tokens | undefined {
  if (modelUsage === null || typeof modelUsage !== "object" || Array.isArray(modelUsage)) return undefined;
  const models = Object.values(modelUsage as Json).filter((m): m is Json => m !== null && typeof m === "object");
  if (models.length === 0) return undefined;
  let total = ZERO;
  for (const m of models) {
    const input = count(m.inputTokens);
    const output = count(m.outputTokens);
    if (input === undefined || output === undefined) return undefined;
    total = addTokens(total, { input, output, cache_read: count(m.cacheReadInputTokens) ?? 0, cache_write: count(m.cacheCreationInputTokens) ?? 0 });
  }
  return total;
}
