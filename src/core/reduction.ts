// What a reducer knows once its stream is over, before the process outcome
// (exit code, signal, a stop) is weighed in by the judge.
import type { Failure } from "./failure.ts";
import type { LineSink } from "./frame.ts";
import type { Refused, Tokens } from "./verdict.ts";
import type { LiveTurns } from "./supervisor.ts";
import type { Drift } from "./drift.ts";

export type Summary = Record<string, string | number | boolean>;

export interface Reduction {
  /** The final text of the run (the last result, pi's last assistant text), else null. */
  text: string | null;
  /** What the stream itself says went wrong, else null. */
  failure: Failure | null;
  /**
   * The run reached its end in the stream: claude's every turn has its
   * result; pi's last `agent_end` arrived and nothing reopened the run.
   */
  finished: boolean;
  /** Tool calls started. */
  toolCalls: number;
  /** The provider error the agent was retrying when the stream stopped, else null. */
  pendingRetryError: string | null;
  /**
   * false when the stream's last record is the model's own output (text, a tool call): the agent was not
   * waiting on the provider then, and a retry its stderr told of is history. Said only by an agent whose
   * retries are on stderr alone (gemini); undefined: unknown.
   */
  awaitingModel?: boolean;
  sessionId: string | null;
  model: string | null;
  stopReason: string | null;
  costMicroUsd: number | null;
  /** true when the cost is tokens × a price (agentport's), not the agent's own figure. */
  costDerived?: boolean;
  tokens: Tokens | null;
  refused: Refused[];
  /** The agent's own record said its usage limit rejected the run (claude's rate_limit_event `rejected`), with the reset when given. */
  wall?: { resetsAtMs: number | null };
  /** Records the reducer depends on that never came while unknown ones did, or fields that moved: a version drift. */
  drift?: Drift;
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
  /**
   * Why the cost stopped arriving though tokens did (a record that carries both came without its
   * cost), else null: a --max-cost budget can no longer be kept. Only agents that report a cost.
   */
  costSilent?(): string | null;
  /** The provider error the agent is retrying now, else null (pi's auto-retry): a quota wall stops the run at once. */
  liveRetryError?(): string | null;
  /** Assistant turns so far, for --max-turns. */
  liveTurns?(): LiveTurns;
  /** Whether the stream so far holds the run's end (read at the moment agentport stops a run). */
  finished(): boolean;
}

/** Refused requests kept to name; past it they are still counted. */
export const MAX_REFUSED = 64;
export const MAX_REASON_CHARS = 400;
export const MAX_VALUE_CHARS = 120;
export const MAX_SUBJECT_CHARS = 160;

/**
 * The reduction on agentport's own session `id`: a stream that named another
 * session (an agent that ignored --session-id, a planted record) changes no
 * verdict's session; the agent's id is kept as summary.agent_session_id.
 */
export function onOwnSession(reduction: Reduction, id: string): Reduction {
  if (reduction.sessionId === null || reduction.sessionId === id) return reduction;
  return { ...reduction, sessionId: id, summary: { ...reduction.summary, agent_session_id: reduction.sessionId } };
}
