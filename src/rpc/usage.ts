// Tokens and cost from `get_session_stats`, and the part of them one turn or
// one clone owns. pi's stats are cumulative over the session's messages, and a
// clone starts with a copy of its parent's history: a clone's own usage is
// "now" minus "at clone", a turn's is "after" minus "before". Pure.
import { count, microUsd } from "../core/numbers.ts";
import type { Json } from "../core/record.ts";
import type { Usage } from "../core/usage.ts";
import type { Tokens } from "../core/verdict.ts";

export type { Usage };

export const ZERO_USAGE: Usage = { tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 }, costMicroUsd: 0 };

/** The usage a get_session_stats `data` reports; a field that is no plausible number makes its part null. */
export function usageFromStats(data: unknown): Usage {
  const d = data !== null && typeof data === "object" ? (data as Json) : {};
  const t = d.tokens !== null && typeof d.tokens === "object" ? (d.tokens as Json) : null;
  let tokens: Tokens | null = null;
  if (t !== null) {
    const input = count(t.input);
    const output = count(t.output);
    const cacheRead = count(t.cacheRead ?? 0);
    const cacheWrite = count(t.cacheWrite ?? 0);
    if (input !== undefined && output !== undefined && cacheRead !== undefined && cacheWrite !== undefined) {
      tokens = { input, output, cache_read: cacheRead, cache_write: cacheWrite };
    }
  }
  return { tokens, costMicroUsd: microUsd(d.cost) ?? null };
}

/**
 * `after` minus `before`. A part that went down (pi compacted the history, or
 * the session changed under us) cannot be attributed: it is null.
 */
export function usageSince(after: Usage, before: Usage): Usage {
  let tokens: Tokens | null = null;
  if (after.tokens !== null && before.tokens !== null) {
    const a = after.tokens;
    const b = before.tokens;
    const diff = {
      input: a.input - b.input,
      output: a.output - b.output,
      cache_read: a.cache_read - b.cache_read,
      cache_write: a.cache_write - b.cache_write,
    };
    if (diff.input >= 0 && diff.output >= 0 && diff.cache_read >= 0 && diff.cache_write >= 0) tokens = diff;
  }
  let costMicroUsd: number | null = null;
  if (after.costMicroUsd !== null && before.costMicroUsd !== null && after.costMicroUsd >= before.costMicroUsd) {
    costMicroUsd = after.costMicroUsd - before.costMicroUsd;
  }
  return { tokens, costMicroUsd };
}
