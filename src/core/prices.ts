// Cost from tokens, for agents whose stream carries none (codex, gemini, an
// opencode that reports none): at the user's price for the model (`prices` in
// agentport.json), else the shipped table's (price-table.ts, generated from
// pi's model registry), else null, never 0. Pure.
import type { z } from "zod";
import { lazySchema } from "./lazy-schema.ts";
import type { Tokens } from "./verdict.ts";
import { PRICE_TABLE } from "./price-table.ts";

/** USD per million tokens. */
export const PriceSchema = lazySchema((z) =>
  z.object({
    input: z.number().nonnegative(),
    output: z.number().nonnegative(),
    cache_read: z.number().nonnegative().optional(),
    cache_write: z.number().nonnegative().optional(),
  }),
);
export type Price = z.infer<typeof PriceSchema>;

/** Prices keyed by the model id as the user names it. */
export const PricesSchema = lazySchema((z) => z.record(z.string(), PriceSchema));
export type Prices = z.infer<typeof PricesSchema>;

/** The cost of `tokens` at `price`, in integer micro-USD; null without a price or tokens. */
export function costMicroUsd(tokens: Tokens | null, price: Price | null | undefined): number | null {
  if (tokens === null || price === null || price === undefined) return null;
  // USD per million tokens is micro-USD per token.
  const cacheRead = price.cache_read ?? price.input;
  return Math.round(
    tokens.input * price.input +
      tokens.output * price.output +
      tokens.cache_read * cacheRead +
      tokens.cache_write * (price.cache_write ?? price.input),
  );
}

/** Where a verdict's cost came from: the agent said it, tokens × a price, or nobody knows (cost null). */
export const COST_SOURCES = ["reported", "derived", "unknown"] as const;
export type CostSource = (typeof COST_SOURCES)[number];

export interface KnownPrice {
  price: Price;
  /** "config" (agentport.json `prices`) or "table" (shipped). */
  from: "config" | "table";
}

/** The price of `model`: the user's first, then the shipped table's (by id, then without a provider prefix); null when neither knows it. */
export function priceOf(model: string | null | undefined, overrides: Prices | null | undefined): KnownPrice | null {
  if (!model) return null;
  const own = overrides?.[model];
  if (own !== undefined) return { price: own, from: "config" };
  const row = PRICE_TABLE[model] ?? PRICE_TABLE[model.slice(model.indexOf("/") + 1)];
  if (row === undefined) return null;
  const [input, output, cacheRead, cacheWrite] = row;
  // A 0 in the registry is "not given" for the cache rates: charged at the input price, never free.
  return {
    price: { input, output, ...(cacheRead > 0 ? { cache_read: cacheRead } : {}), ...(cacheWrite > 0 ? { cache_write: cacheWrite } : {}) },
    from: "table",
  };
}
