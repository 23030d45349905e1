// What codex's stream says a phase cost: turn.completed.usage is the thread's
// running total, so the phase's tokens are that total minus the thread's
// total before the phase (`previous`, on resume). No cost is in the stream.
import { count } from "../numbers.ts";
import type { Tokens } from "../verdict.ts";
import type { CodexUsage } from "./events.ts";

const ZERO: Tokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };

export class CodexBill {
  /** codex's running total for the thread, as the last turn.completed gave it. */
  threadTotal: Tokens | null = null;
  reasoningTokens = 0;
  /** turn.completed came without a usage this reducer reads. */
  usageMissing = false;
  private readonly previous: Tokens;

  constructor(previous: Tokens | null | undefined) {
    this.previous = previous ?? ZERO;
  }

  /** turn.completed's `usage`. */
  take(usage: unknown): void {
    this.usageMissing = true;
    if (usage === null || typeof usage !== "object") return;
    const u = usage as CodexUsage;
    const input = count(u.input_tokens);
    const output = count(u.output_tokens);
    if (input === undefined || output === undefined) return;
    this.usageMissing = false;
    const cached = Math.min(input, count(u.cached_input_tokens) ?? 0);
    this.threadTotal = { input: input - cached, output, cache_read: cached, cache_write: count(u.cache_write_input_tokens) ?? 0 };
    this.reasoningTokens = count(u.reasoning_output_tokens) ?? 0;
  }

  /** This phase's tokens: the thread's total less the earlier phases'. */
  phase(): Tokens | null {
    const total = this.threadTotal;
    if (total === null) return null;
    const p = this.previous;
    return {
      input: Math.max(0, total.input - p.input),
      output: Math.max(0, total.output - p.output),
      cache_read: Math.max(0, total.cache_read - p.cache_read),
      cache_write: Math.max(0, total.cache_write - p.cache_write),
    };
  }
}
