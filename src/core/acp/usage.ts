// Usage and cost as ACP agents report them (no standard cost): opencode's
// `usage_update.cost` (the session's running total, USD) and its prompt
// result's `usage`; gemini's prompt result `_meta.quota.token_count`. A cost
// nobody reported is null, never 0 (acp takes no --model, so there is no price
// to derive one from). Pure.
import { count, microUsd } from "../numbers.ts";
import { objectOf, type Json } from "../record.ts";
import { clean } from "../text.ts";
import type { Tokens } from "../verdict.ts";

export class AcpUsage {
  tokens: Tokens | null = null;
  model: string | null = null;
  contextUsed: number | undefined;
  contextSize: number | undefined;
  /** The session's running total as last reported, micro-USD. */
  private reportedTotal: number | null = null;

  constructor(
    /** What the session's earlier phases cost (a loaded session's running total includes them). */
    private readonly earlierCost: number,
  ) {}

  /** A `usage_update`: the context window and the running cost (USD only). */
  update(update: Json): void {
    this.contextUsed = count(update.used) ?? this.contextUsed;
    this.contextSize = count(update.size) ?? this.contextSize;
    const cost = objectOf(update.cost);
    if (cost === null || cost.currency !== "USD") return;
    const amount = microUsd(cost.amount);
    if (amount !== undefined) this.reportedTotal = amount;
  }

  /** The prompt's result: opencode's `usage`, gemini's `_meta.quota`. */
  result(result: Json): void {
    const usage = objectOf(result.usage);
    if (usage !== null) {
      const input = count(usage.inputTokens);
      const output = count(usage.outputTokens);
      if (input !== undefined && output !== undefined) {
        this.tokens = { input, output, cache_read: count(usage.cachedReadTokens) ?? 0, cache_write: count(usage.cachedWriteTokens) ?? 0 };
      }
    }
    const quota = objectOf(objectOf(result._meta)?.quota);
    const tokenCount = objectOf(quota?.token_count);
    if (tokenCount !== null && this.tokens === null) {
      const input = count(tokenCount.input_tokens);
      const output = count(tokenCount.output_tokens);
      if (input !== undefined && output !== undefined) this.tokens = { input, output, cache_read: 0, cache_write: 0 };
    }
    const models = Array.isArray(quota?.model_usage) ? (quota.model_usage as unknown[]) : [];
    const last = objectOf(models[models.length - 1]);
    if (last !== null) this.model = clean(last.model, 120) || this.model;
  }

  /** This phase's share of the reported running total; null when none was reported. */
  cost(): number | null {
    return this.reportedTotal === null ? null : Math.max(0, this.reportedTotal - this.earlierCost);
  }
}
