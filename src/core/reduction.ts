// What a reducer knows once its stream is over, before the process outcome
// (exit code, signal, timeout) is weighed in by `decide`.
import type { LineSink } from "./frame.ts";
import type { Refused, Tokens } from "./verdict.ts";
import type { LiveTurns } from "./supervisor.ts";

export type Summary = Record<string, string | number | boolean>;

export interface Reduction {
  /** The final text on success, else null. */
  text: string | null;
  /** The bounded reason the stream failed, else null. */
  failure: string | null;
  /** stdout ended inside a turn (no result for it). */
  exitedEarly: boolean;
  sessionId: string | null;
  model: string | null;
  stopReason: string | null;
  costMicroUsd: number | null;
  tokens: Tokens | null;
  refused: Refused[];
  /** Flat, bounded scalars. */
  summary: Summary;
}

/** A reducer: fed lines by the framer, told when the stream ends, asked for its reduction. */
export interface Reducer extends LineSink {
  streamEnded(): void;
  reduction(): Reduction;
  /** The run's token totals so far, for the budget guard; null when unknown. */
  liveTokens(): Tokens | null;
  /** The run's cost so far (micro-USD), for --max-cost; null when unknown. */
  liveCost?(): number | null;
  /** Assistant turns so far, for --max-turns. */
  liveTurns?(): LiveTurns;
}

/** Refused requests kept to name; past it they are still counted. */
export const MAX_REFUSED = 64;
export const MAX_REASON_CHARS = 400;
export const MAX_VALUE_CHARS = 120;
export const MAX_SUBJECT_CHARS = 160;
