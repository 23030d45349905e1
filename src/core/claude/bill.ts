// What claude's stream says a run cost: per session, the last result's
// total_cost_usd and modelUsage (they are the session's so far), the results'
// `usage` summed as the fallback, and before any result the assistant
// messages' usage (each API response once), for the budget guard.
import { addCapped, count, microUsd } from "../numbers.ts";
import type { Json } from "../record.ts";
import type { Tokens } from "../verdict.ts";
import type { ClaudeResult } from "./events.ts";

const ZERO: Tokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
// Response ids remembered to count each API response once.
const MAX_LIVE_IDS = 65_536;
// claude's two figures are rounded apart by at most a few micro-USD.
const MISMATCH_MICRO_USD = 10;

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

/** The bills of the sessions a stream named (a stream may hold two). */
export class ClaudeBills {
  private readonly bills = new Map<string, SessionBill>();
  private readonly liveIds = new Set<string>();
  private live: Tokens = { ...ZERO };

  get sessions(): number {
    return this.bills.size;
  }

  /** A result of `sessionId`: its figures replace the session's, its usage adds up. */
  result(sessionId: string | null, record: ClaudeResult): void {
    const key = sessionId ?? "";
    let bill = this.bills.get(key);
    if (bill === undefined) {
      bill = { costMicroUsd: null, modelCostMicroUsd: null, modelTokens: null, usageTokens: ZERO };
      this.bills.set(key, bill);
    }
    bill.costMicroUsd = microUsd(record.total_cost_usd) ?? null;
    bill.modelTokens = modelUsageTokens(record.modelUsage) ?? bill.modelTokens;
    bill.modelCostMicroUsd = modelUsageCost(record.modelUsage);
    bill.usageTokens = bill.usageTokens === null ? null : usageTokens(record.usage, bill.usageTokens);
  }

  /** An assistant message's usage, once per API response (its records share message.id). */
  sample(message: unknown): void {
    if (message === null || typeof message !== "object") return;
    const m = message as Json;
    if (typeof m.id !== "string" || this.liveIds.has(m.id) || this.liveIds.size >= MAX_LIVE_IDS) return;
    this.liveIds.add(m.id);
    const u = m.usage !== null && typeof m.usage === "object" ? (m.usage as Json) : {};
    this.live = addTokens(this.live, {
      input: count(u.input_tokens) ?? 0,
      output: count(u.output_tokens) ?? 0,
      cache_read: count(u.cache_read_input_tokens) ?? 0,
      cache_write: count(u.cache_creation_input_tokens) ?? 0,
    });
  }

  /** The results' tokens: modelUsage where given, else `usage`; null when a session has neither. */
  billed(): Tokens | null {
    let total: Tokens = ZERO;
    for (const bill of this.bills.values()) {
      const tokens = bill.modelTokens ?? bill.usageTokens;
      if (tokens === null) return null;
      total = addTokens(total, tokens);
    }
    return total;
  }

  /** The running totals the assistant messages showed, or null before any. */
  sampled(): Tokens | null {
    return this.live.input + this.live.output > 0 ? { ...this.live } : null;
  }

  /** The larger of the billed and the sampled figures, each count on its own. */
  running(billed: Tokens | null): Tokens {
    if (billed === null) return this.live;
    return {
      input: Math.max(this.live.input, billed.input),
      output: Math.max(this.live.output, billed.output),
      cache_read: Math.max(this.live.cache_read, billed.cache_read),
      cache_write: Math.max(this.live.cache_write, billed.cache_write),
    };
  }

  cost(): number | null {
    return sumOrNull([...this.bills.values()].map((b) => b.costMicroUsd));
  }

  /** total_cost_usd against modelUsage's costUSD, per session: where both are given and they differ, one line saying so. */
  mismatch(): string | null {
    const usd = (micro: number) => `$${(micro / 1e6).toFixed(6)}`;
    for (const b of this.bills.values()) {
      if (b.costMicroUsd === null || b.modelCostMicroUsd === null) continue;
      if (Math.abs(b.costMicroUsd - b.modelCostMicroUsd) > MISMATCH_MICRO_USD)
        return `total_cost_usd ${usd(b.costMicroUsd)} but modelUsage costUSD sums to ${usd(b.modelCostMicroUsd)}`;
    }
    return null;
  }
}

function addTokens(a: Tokens, b: Tokens): Tokens {
  return {
    input: addCapped(a.input, b.input),
    output: addCapped(a.output, b.output),
    cache_read: addCapped(a.cache_read, b.cache_read),
    cache_write: addCapped(a.cache_write, b.cache_write),
  };
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
  return addTokens(into, {
    input,
    output,
    cache_read: count(u.cache_read_input_tokens) ?? 0,
    cache_write: count(u.cache_creation_input_tokens) ?? 0,
  });
}

/** modelUsage's costUSD summed over its models (micro-USD); null when a model lacks it. */
function modelUsageCost(modelUsage: unknown): number | null {
  if (modelUsage === null || typeof modelUsage !== "object" || Array.isArray(modelUsage)) return null;
  const costs = Object.values(modelUsage as Json).map((m) =>
    m !== null && typeof m === "object" ? (microUsd((m as Json).costUSD) ?? null) : null,
  );
  return sumOrNull(costs);
}

/** `modelUsage` summed over its models (side calls included), or undefined when it has none. */
function modelUsageTokens(modelUsage: unknown): Tokens | undefined {
  if (modelUsage === null || typeof modelUsage !== "object" || Array.isArray(modelUsage)) return undefined;
  const models = Object.values(modelUsage as Json).filter((m): m is Json => m !== null && typeof m === "object");
  if (models.length === 0) return undefined;
  let total = ZERO;
  for (const m of models) {
    const input = count(m.inputTokens);
    const output = count(m.outputTokens);
    if (input === undefined || output === undefined) return undefined;
    total = addTokens(total, {
      input,
      output,
      cache_read: count(m.cacheReadInputTokens) ?? 0,
      cache_write: count(m.cacheCreationInputTokens) ?? 0,
    });
  }
  return total;
}
