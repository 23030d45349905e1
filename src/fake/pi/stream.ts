// The fake pi's event stream: agent runs, turns, streamed assistant messages, failed and aborted
// model calls with pi's auto-retry, as pi emits them in json and RPC modes.
import type { Json } from "../../core/record.ts";
import { writeOut } from "../runtime.ts";
import type { RunContext } from "./context.ts";
import { API } from "./dialect.ts";
import type { Scenario, ScenarioUsage } from "./scenarios.ts";

export type Block = Json & { type: "text" | "thinking" | "toolCall" };

const zeroPiUsage = () => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});
const round = (n: number): number => Number(n.toPrecision(12));
export const clone = <T>(value: T): T => structuredClone(value);

function usageOf(u: ScenarioUsage): Json {
  // 1.5 $/M input, 15 $/M output, 0.15 $/M cache read, 1.875 $/M cache write.
  const parts = {
    input: u.input * 1.5e-6,
    output: u.output * 15e-6,
    cacheRead: u.cacheRead * 0.15e-6,
    cacheWrite: u.cacheWrite * 1.875e-6,
  };
  const sum = parts.input + parts.output + parts.cacheRead + parts.cacheWrite;
  if (u.cost !== undefined) {
    if (sum > 0) for (const k of Object.keys(parts) as (keyof typeof parts)[]) parts[k] = (parts[k] * u.cost) / sum;
    else parts.input = u.cost;
  }
  const cost = {
    input: round(parts.input),
    output: round(parts.output),
    cacheRead: round(parts.cacheRead),
    cacheWrite: round(parts.cacheWrite),
    total: round(u.cost ?? sum),
  };
  const tokens = {
    input: u.input,
    output: u.output,
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite,
  };
  return u.noCost ? tokens : { ...tokens, cost };
}

/** The text in up to 3 pieces, as the standin streamed it. */
function pieces(text: string): string[] {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / 3));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** pi's retryable-error test (agent-session.js _isRetryableError). */
const RETRYABLE =
  /overloaded|provider.?returned.?error|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|http2 request did not get a response|timed? out|timeout|terminated|retry delay/i;

export class PiStream {
  protected provider: string;
  protected model: string;
  protected responses = 0;
  protected retryAttempt = 0;
  protected runOpen = false;
  protected runMessages: Json[] = [];
  protected turnAssistant: Json | null = null;
  protected turnToolResults: Json[] = [];
  /** The run ended in failure: later message steps of this prompt are skipped. */
  protected failed = false;
  /** The conversation as pi's agent state holds it (retried errors removed), for text mode. */
  protected lastMessage: Json | null = null;

  constructor(
    protected readonly scenario: Scenario,
    readonly ctx: RunContext,
  ) {
    this.provider = ctx.provider;
    this.model = ctx.model;
  }

  async emit(event: Json): Promise<void> {
    if (this.ctx.json) await writeOut(`${JSON.stringify(event)}\n`);
    if (event.type === "message_end") {
      const message = event.message as Json;
      this.ctx.session.append({ type: "message", message });
      this.lastMessage = message;
    }
  }

  /** RPC set_model: the following messages are this model's. */
  setModel(provider: string, model: string): void {
    this.provider = provider;
    this.model = model;
  }

  abortRequested(): boolean {
    return this.ctx.abort?.requested === true;
  }

  /** Sleep; in RPC an abort ends it early (true). */
  protected pause(ms: number): Promise<boolean> {
    if (this.ctx.abort) return this.ctx.abort.pause(ms);
    if (!Number.isFinite(ms)) return new Promise(() => setInterval(() => {}, 1 << 30));
    return Bun.sleep(ms).then(() => false);
  }

  /** A retry runs through continue(): a new agent_start/turn_start, no user message. */
  protected async openRun(): Promise<void> {
    if (this.runOpen) return;
    this.runOpen = true;
    this.runMessages = [];
    this.turnAssistant = null;
    this.turnToolResults = [];
    await this.emit({ type: "agent_start" });
    await this.emit({ type: "turn_start" });
  }

  /** Each assistant message is a turn: close the previous one first. */
  protected async nextTurn(): Promise<void> {
    await this.openRun();
    if (this.turnAssistant) {
      await this.emit({ type: "turn_end", message: this.turnAssistant, toolResults: this.turnToolResults });
      await this.emit({ type: "turn_start" });
      this.turnAssistant = null;
      this.turnToolResults = [];
    }
  }

  protected async closeRun(): Promise<void> {
    if (!this.runOpen) return;
    if (this.turnAssistant) await this.emit({ type: "turn_end", message: this.turnAssistant, toolResults: this.turnToolResults });
    await this.emit({ type: "agent_end", messages: this.runMessages });
    this.runOpen = false;
    this.turnAssistant = null;
    this.turnToolResults = [];
  }

  protected base(stopReason: string): Json {
    return {
      role: "assistant",
      content: [],
      api: API,
      provider: this.provider,
      model: this.model,
      usage: zeroPiUsage(),
      stopReason,
      timestamp: Date.now(),
    };
  }

  protected async update(partial: Json, event: Json): Promise<void> {
    const snapshot = clone(partial);
    await this.emit({ type: "message_update", assistantMessageEvent: { ...event, partial: snapshot }, message: snapshot });
  }

  /** A streamed assistant message: starts and deltas in block order, then every *_end, then message_end. */
  protected async assistant(blocks: Block[], stopReason: "stop" | "toolUse", usage?: ScenarioUsage, chunkDelayMs?: number): Promise<Json> {
    await this.nextTurn();
    this.responses += 1;
    const partial = this.base("stop");
    await this.emit({ type: "message_start", message: clone(partial) });
    partial.responseId = `chatcmpl-fake-${this.responses}`;
    const content: Json[] = [];
    partial.content = content;
    for (const [ci, block] of blocks.entries()) {
      if (block.type === "toolCall") {
        const json = JSON.stringify(block.arguments);
        const live: Json = { type: "toolCall", id: block.id, name: block.name, arguments: {}, partialArgs: "", streamIndex: ci };
        content.push(live);
        await this.update(partial, { type: "toolcall_start", contentIndex: ci });
        for (const delta of pieces(json)) {
          live.partialArgs = `${String(live.partialArgs)}${delta}`;
          try {
            live.arguments = JSON.parse(String(live.partialArgs));
          } catch {
            // still partial
          }
          await this.update(partial, { type: "toolcall_delta", contentIndex: ci, delta });
        }
      } else {
        const key = block.type === "text" ? "text" : "thinking";
        const live: Json = { type: block.type, [key]: "" };
        content.push(live);
        await this.update(partial, { type: `${block.type}_start`, contentIndex: ci });
        for (const [n, delta] of pieces(String(block[key])).entries()) {
          // A slow reply: an abort between two deltas ends the message "aborted", its partial text kept (d1).
          if (n > 0 && chunkDelayMs && (await this.pause(chunkDelayMs))) return this.abortedMidStream(partial, content);
          live[key] = `${String(live[key])}${delta}`;
          await this.update(partial, { type: `${block.type}_delta`, contentIndex: ci, delta });
        }
      }
    }
    partial.usage = usageOf(usage ?? this.scenario.usage);
    partial.stopReason = stopReason;
    for (const [ci, block] of blocks.entries()) {
      content[ci] = clone(block);
      if (block.type === "toolCall") await this.update(partial, { type: "toolcall_end", contentIndex: ci, toolCall: clone(block) });
      else
        await this.update(partial, {
          type: `${block.type}_end`,
          contentIndex: ci,
          content: block.type === "text" ? block.text : block.thinking,
        });
    }
    const message = clone(partial);
    await this.emit({ type: "message_end", message });
    this.runMessages.push(message);
    this.turnAssistant = message;
    if (this.retryAttempt > 0) {
      await this.emit({ type: "auto_retry_end", success: true, attempt: this.retryAttempt });
      this.retryAttempt = 0;
    }
    return message;
  }

  /** The abort of a streaming reply: every started block ends, then message_end "aborted" with the partial content, turn_end, agent_end. */
  protected async abortedMidStream(partial: Json, content: Json[]): Promise<Json> {
    for (const [ci, block] of content.entries()) {
      if (block.type === "toolCall") await this.update(partial, { type: "toolcall_end", contentIndex: ci, toolCall: clone(block) });
      else
        await this.update(partial, {
          type: `${String(block.type)}_end`,
          contentIndex: ci,
          content: block.type === "text" ? block.text : block.thinking,
        });
    }
    return this.endAborted(partial);
  }

  /** A failed model call: message_start/end with no updates, the run ends, then pi's auto-retry decides. */
  protected async failedAttempt(errorMessage: string): Promise<void> {
    await this.nextTurn();
    const message = { ...this.base("error"), errorMessage };
    await this.emit({ type: "message_start", message });
    await this.emit({ type: "message_end", message });
    this.runMessages.push(message);
    this.turnAssistant = message;
    await this.closeRun();
    const retry = this.ctx.retry;
    if (!RETRYABLE.test(errorMessage) || !retry.enabled) {
      this.failed = true;
      return;
    }
    this.retryAttempt += 1;
    if (this.retryAttempt > retry.maxRetries) {
      await this.emit({ type: "auto_retry_end", success: false, attempt: this.retryAttempt - 1, finalError: errorMessage });
      this.retryAttempt = 0;
      this.failed = true;
      return;
    }
    await this.emit({
      type: "auto_retry_start",
      attempt: this.retryAttempt,
      maxAttempts: retry.maxRetries,
      delayMs: retry.baseDelayMs * 2 ** (this.retryAttempt - 1),
      errorMessage,
    });
    this.lastMessage = null;
    if (await this.pause(this.scenario.retrySleepMs)) {
      // pi's abortRetry: the delay is cut, the retry ends as cancelled.
      await this.emit({ type: "auto_retry_end", success: false, attempt: this.retryAttempt, finalError: "Retry cancelled" });
      this.retryAttempt = 0;
      this.failed = true;
    }
  }

  protected async aborted(text: string): Promise<void> {
    await this.nextTurn();
    this.responses += 1;
    const partial = this.base("stop");
    await this.emit({ type: "message_start", message: clone(partial) });
    if (text) {
      partial.responseId = `chatcmpl-fake-${this.responses}`;
      const live = { type: "text", text: "" };
      partial.content = [live];
      await this.update(partial, { type: "text_start", contentIndex: 0 });
      live.text = text;
      await this.update(partial, { type: "text_delta", contentIndex: 0, delta: text });
      await this.update(partial, { type: "text_end", contentIndex: 0, content: text });
    }
    await this.endAborted(partial);
  }

  /** An aborted reply ends: message_end "aborted" with what streamed so far, then the run (turn_end, agent_end). */
  protected async endAborted(partial: Json): Promise<Json> {
    const message = { ...clone(partial), stopReason: "aborted", errorMessage: "Request was aborted" };
    await this.emit({ type: "message_end", message });
    this.runMessages.push(message);
    this.turnAssistant = message;
    await this.closeRun();
    this.failed = true;
    return message;
  }

  /** A tool's result message, in the run and in the turn. */
  async toolResult(message: Json): Promise<void> {
    await this.emit({ type: "message_start", message });
    await this.emit({ type: "message_end", message });
    this.runMessages.push(message);
    this.turnToolResults.push(message);
  }

  /** Text mode (`-p` without --mode json): the last assistant message's text, or its error on stderr and exit 1. */
  textModeResult(): number {
    const last = this.lastMessage;
    if (last?.role !== "assistant") return 0;
    if (last.stopReason === "error" || last.stopReason === "aborted") {
      process.stderr.write(`${String(last.errorMessage || `Request ${String(last.stopReason)}`)}\n`);
      return 1;
    }
    let out = "";
    for (const block of last.content as Json[]) if (block.type === "text") out += `${String(block.text)}\n`;
    if (out) process.stdout.write(out);
    return 0;
  }
}
