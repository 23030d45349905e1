// What pi's stream says a run cost: tokens and cost summed over every
// assistant message (retried attempts included: they were billed). One
// message without its counts makes the sum unknown (null): a wrong sum is
// worse than none.
import { addCapped, count, microUsd } from "../numbers.ts";
import type { Json } from "../record.ts";
import type { Tokens } from "../verdict.ts";

export class PiBill {
  tokens: Tokens | null = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  costMicroUsd: number | null = 0;

  /** An assistant message's `usage`. */
  add(usage: unknown): void {
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
}
