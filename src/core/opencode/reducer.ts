// The opencode reducer: one `opencode run --format json` invocation, fed one
// line at a time (opencode 1.18.33, ground truth §2-5). It never starts a
// process, reads a clock or knows a CLI flag.
//
// Every record is `{type, timestamp, sessionID, part | error}`; the session id
// (`ses_…`, chosen by opencode) is bound from the first record. There is no
// terminal record: the run ends after its last `step_finish`, so the stream
// has finished only when that step's reason is a final one (`stop`, …) or an
// `error` record came. A last step ending in `tool-calls` means opencode
// auto-rejected a permission and stopped without an answer (not a success);
// one ending in `unknown` is a stream cut before its finish reason, which
// opencode asks again at once, forever: each such step is the same action to
// the loop observer, so consecutive ones trip its repeat rule. Tokens and
// cost are per step: the totals are the sums over the step_finish records
// (the cost is opencode's own, from its config's prices; the user's price
// only when no step carried one).
import { digest } from "../digest.ts";
import type { FailureKind } from "../failure.ts";
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { addCapped, count, microUsd } from "../numbers.ts";
import { costMicroUsd, type Price } from "../prices.ts";
import { MAX_TOOL_CHARS, type ProgressSink } from "../progress.ts";
import { MAX_REFUSED, MAX_VALUE_CHARS, type Reducer, type Reduction, type Summary } from "../reduction.ts";
import { JsonLineReducer } from "../json-lines.ts";
import type { Json } from "../record.ts";
import { clean } from "../text.ts";
import { addOpencodeTokens, CutSteps, CUT_STEP, INVALID_TOOL, NOT_FINAL, REJECTED, toolDetail } from "./common.ts";
import type { Refused, Tokens } from "../verdict.ts";
import type { OpencodeRecord } from "./events.ts";

export interface OpencodeReducerOptions {
  cwd?: string;
  emit?: ProgressSink;
  loop?: LoopObserver;
  /** The user's price for the model, used only when no step carried opencode's cost. */
  price?: Price | null;
  /** Called once, when the first record names the session. */
  onSession?: (sessionId: string) => void;
}

export interface OpencodeReading extends Reduction {
  /** Consecutive steps (no tool call between them), at the end of the stream, that ended with reason `unknown` (a cut stream). */
  cutSteps: number;
}

export { CUT_STEP };

export class OpencodeReducer extends JsonLineReducer implements Reducer {
  private readonly cwd: string;
  private readonly loop: LoopObserver | undefined;
  private readonly price: Price | null;
  private readonly onSession: OpencodeReducerOptions["onSession"];

  private sessionId: string | null = null;
  private text: string | null = null;
  /** "" before any step, "open" inside one, else the last step's finish reason. */
  private step = "";
  private errored = false;
  private tokens: Tokens | null = null;
  private reasoning = 0;
  private cost: number | null = null;
  private apiStatus: number | null = null;
  private errorName = "";
  private readonly refused: Refused[] = [];
  private refusedCount = 0;
  /** Permissions rejected in the current (or last) step. */
  private stepRejections = 0;

  private unknown = 0;
  private steps = 0;
  private readonly cut: CutSteps;
  private toolCalls = 0;
  private toolErrors = 0;

  constructor(options: OpencodeReducerOptions = {}) {
    super(options.emit, "opencode: json");
    this.cwd = options.cwd ?? "";
    this.loop = options.loop;
    this.cut = new CutSteps(options.loop);
    this.price = options.price ?? null;
    this.onSession = options.onSession;
  }

  finished(): boolean {
    return this.errored || (this.step !== "" && this.step !== "open" && !NOT_FINAL.has(this.step));
  }

  streamEnded(): void {
    if (this.failure !== null || this.finished()) return;
    if (this.records === 0) return this.fail("opencode: exited without a record", "no_result");
    switch (this.step) {
      case "tool-calls":
        if (this.stepRejections > 0)
          return this.fail("opencode: a permission was auto-rejected and the run ended without an answer", "agent_error");
        return this.fail("opencode: the run ended after a tool call, without an answer", "no_result");
      case "unknown":
        return this.fail(`opencode: ${this.cut.describe()}`, "provider_error");
      default:
        return this.fail("opencode: exited in the middle of a step", "no_result");
    }
  }

  reduction(): OpencodeReading {
    const summary: Summary = {
      records: this.records,
      oversize_records: this.oversizeLines,
      unknown_events: this.unknown,
      steps: this.steps,
      cut_steps: this.cut.total,
      tool_calls: this.toolCalls,
      tool_errors: this.toolErrors,
      refused_requests: this.refusedCount,
      reasoning_tokens: this.reasoning,
    };
    if (this.step !== "" && this.step !== "open") summary.last_finish_reason = this.step;
    if (this.errorName) summary.error_name = this.errorName;
    if (this.apiStatus !== null) summary.api_error_status = this.apiStatus;
    return {
      text: this.failure === null ? this.text : null,
      failure: this.failed(),
      finished: this.finished(),
      toolCalls: this.toolCalls,
      // opencode's retries are invisible in run's stream.
      pendingRetryError: null,
      sessionId: this.sessionId,
      model: null,
      stopReason: this.step !== "" && this.step !== "open" ? this.step : null,
      costMicroUsd: this.liveCost(),
      costDerived: this.cost === null,
      tokens: this.tokens,
      refused: [...this.refused],
      summary,
      cutSteps: this.cut.inARow,
    };
  }

  liveTokens(): Tokens | null {
    return this.tokens;
  }

  liveCost(): number | null {
    return this.cost ?? costMicroUsd(this.tokens, this.price);
  }

  // -- internals ---------------------------------------------------------------

  protected reading(): boolean {
    return this.failure === null || this.errored;
  }

  protected observe(raw: Json & { type: string }): void {
    const record = raw as OpencodeRecord;
    this.bindSession(record.sessionID);
    const part = raw.part !== null && typeof raw.part === "object" ? (raw.part as Json) : {};
    switch (record.type) {
      case "step_start":
        this.steps += 1;
        this.step = "open";
        this.stepRejections = 0;
        this.send({ kind: "activity" });
        return;
      case "text":
        this.text = typeof part.text === "string" ? part.text : "";
        this.loop?.turn(this.text ? digest(this.text) : undefined);
        this.send({ kind: "assistant_text" });
        return;
      case "reasoning":
        this.send({ kind: "thinking" });
        return;
      case "tool_use":
        this.toolUse(part);
        return;
      case "step_finish":
        this.stepFinish(part);
        return;
      case "error":
        this.error(record.error);
        return;
      default:
        this.unknown += 1;
        this.send({ kind: "activity" });
    }
  }

  private bindSession(value: unknown): void {
    if (this.sessionId !== null) return;
    const id = clean(value, MAX_VALUE_CHARS);
    if (!id) return;
    this.sessionId = id;
    this.onSession?.(id);
    this.send({ kind: "started" });
  }

  /** One finished tool call (run json prints a tool only once it is done). */
  private toolUse(part: Json): void {
    this.toolCalls += 1;
    this.cut.progress();
    const tool = clean(part.tool, MAX_TOOL_CHARS) || "unnamed";
    const state = part.state !== null && typeof part.state === "object" ? (part.state as Json) : {};
    const input = state.input !== null && typeof state.input === "object" ? (state.input as Json) : {};
    const detail = toolDetail(tool, input, this.cwd);
    // Text after a tool call is a new reply: the final text is the last one's.
    this.text = null;
    this.send({ kind: "tool_started", tool, detail });
    const error = typeof state.error === "string" ? state.error : "";
    if (tool === INVALID_TOOL) {
      this.refuse(`${clean(input.tool, MAX_TOOL_CHARS) || "unknown tool"} (not offered)`);
      this.toolErrors += 1;
      this.send({ kind: "tool_failed", tool });
    } else if (state.status === "error") {
      this.toolErrors += 1;
      if (error.startsWith(REJECTED)) {
        this.stepRejections += 1;
        this.refuse(`${tool} (auto-rejected)`);
      }
      this.send({ kind: "tool_failed", tool });
    } else {
      this.send({ kind: "tool_finished", tool });
    }
    this.loop?.action(tool, actionFingerprint(tool, digest(state.input ?? ""), digest([state.status, state.output ?? error])));
  }

  private refuse(subject: string): void {
    this.refusedCount += 1;
    if (this.refused.length < MAX_REFUSED) this.refused.push({ kind: "permission", subject: clean(subject, MAX_VALUE_CHARS) });
  }

  private stepFinish(part: Json): void {
    const reason = clean(part.reason, 40) || "unknown";
    this.step = reason;
    this.cut.finish(reason);
    this.addTokens(part.tokens);
    const cost = microUsd(part.cost);
    if (cost !== undefined) this.cost = addCapped(this.cost ?? 0, cost);
    this.send({ kind: "activity" });
  }

  private addTokens(value: unknown): void {
    const added = addOpencodeTokens(this.tokens, value);
    if (added === null) return;
    this.tokens = added.tokens;
    this.reasoning = addCapped(this.reasoning, added.reasoning);
  }

  private error(value: unknown): void {
    const error = value !== null && typeof value === "object" ? (value as Json) : {};
    const data = error.data !== null && typeof error.data === "object" ? (error.data as Json) : {};
    this.errored = true;
    this.errorName = clean(error.name, MAX_TOOL_CHARS);
    const status = count(data.statusCode);
    if (status !== undefined) this.apiStatus = status;
    const message = clean(data.message, MAX_VALUE_CHARS * 3);
    const name = this.errorName || "error";
    // An API error is the provider's; anything else (an unknown model, a crash inside opencode) is opencode's own.
    const kind: FailureKind = this.errorName === "APIError" ? "provider_error" : "agent_error";
    this.failure = null;
    this.fail(`opencode: ${name}${message ? `: ${message}` : ""}`, kind);
    this.send({ kind: "activity" });
  }
}
