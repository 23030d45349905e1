// What a stretch of a run used (a turn, a clone, a session so far): its
// tokens and its cost in micro-USD, each null when it cannot be known.
import type { Tokens } from "./verdict.ts";

export interface Usage {
  tokens: Tokens | null;
  costMicroUsd: number | null;
}
