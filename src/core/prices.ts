// Cost from tokens, for agents whose stream carries none (codex, gemini):
// only when the user gave a price for the model (`prices` in agentport.json),
// else null, never 0. Pure.
import type { z } from "zod";
import { lazySchema } from "./lazy-schema.ts";
import type { Tokens } from "./verdict.ts";

/** USD per million tokens. */
export const PriceSchema = lazySchema((z) =>
  z.object({
    input: z.number().nonnegative(),
    output: z.number().nonnegative(),
    cache_read: z.number().nonnegative().optional(),
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
  return Math.round(tokens.input * price.input + tokens.output * price.output + tokens.cache_read * cacheRead + tokens.cache_write * price.input);
}
