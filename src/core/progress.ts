// Progress events: what a reducer may tell the outside world while a run goes on.
// Only these fields exist, and every string in them is bounded and cleaned by
// the reducer that made it: never a command line, a tool result, thinking or
// assistant text.
import type { Reducer } from "./reduction.ts";
import { SCHEMA_VERSION, type Tokens } from "./verdict.ts";

/** Idle activity is told at most once in this many milliseconds. */
export const ACTIVITY_EVERY_MS = 1_000;

export const PROGRESS_KINDS = [
  "started",
  "thinking",
  "assistant_text",
  "tool_started",
  "tool_finished",
  "tool_failed",
  "provider_retry",
  "activity",
] as const;

export type ProgressKind = (typeof PROGRESS_KINDS)[number];

export interface ProgressEvent {
  kind: ProgressKind;
  /** The tool's name, for tool events. */
  tool?: string;
  /** One allow-listed detail: a model name, a relative path, a pattern, a Bash description, "attempt 2 of 10". */
  detail?: string;
  /** Estimated thinking tokens so far, for thinking events. */
  thinking_tokens?: number;
  /** The phase's tokens so far, as its reducer knows them (null: not known yet). Set on every event a reducer sends. */
  tokens?: Tokens | null;
  /** The phase's cost so far in micro-USD (null: not known yet, or no price). Set with `tokens`. */
  cost_micro_usd?: number | null;
}

/**
 * `event` with the phase's totals so far, as its reducer knows them (the figures
 * the budget guard and --max-cost read): every reducer sends its events
 * through this, so all carry one shape.
 */
export function withRunning(event: ProgressEvent, figures: Pick<Reducer, "liveTokens" | "liveCost">): ProgressEvent {
  const tokens = figures.liveTokens();
  return { ...event, tokens: tokens === null ? null : { ...tokens }, cost_micro_usd: figures.liveCost?.() ?? null };
}

/** An event, and (from the run folder's recorder) whose it is. */
export type ProgressSink = (event: ProgressEvent, subject?: ProgressSubject) => void;

/** Tool names, details and refused subjects are cut to these sizes. */
export const MAX_TOOL_CHARS = 64;
export const MAX_DETAIL_CHARS = 120;

/** Who a progress record is about. */
export interface ProgressSubject {
  sessionId: string;
  agent: string;
}

/** The fields an event may carry besides its kind: what a record takes from it, and nothing else. */
export const PROGRESS_FIELDS = [
  "tool",
  "detail",
  "thinking_tokens",
  "tokens",
  "cost_micro_usd",
] as const satisfies readonly (keyof ProgressEvent)[];

/** A progress event as it is written (progress.ndjson, `--progress json`): when, whose, the kind, then the allow-listed fields it has. */
export function progressRecord(
  event: ProgressEvent,
  subject: { sessionId: string | null; agent: string },
  now: Date = new Date(),
): Record<string, unknown> {
  const record: Record<string, unknown> = {
    schema_version: SCHEMA_VERSION,
    ts: now.toISOString(),
    session_id: subject.sessionId,
    agent: subject.agent,
    kind: event.kind,
  };
  for (const field of PROGRESS_FIELDS) if (event[field] !== undefined) record[field] = event[field];
  return record;
}

/** The last record of a run: its verdict in brief. */
export function verdictRecord(
  verdict: { session_id: string | null; agent: string; status: string; ok: boolean; cost_micro_usd: number | null; tokens: unknown },
  exitCode: number,
  now: Date = new Date(),
): Record<string, unknown> {
  return {
    schema_version: SCHEMA_VERSION,
    ts: now.toISOString(),
    session_id: verdict.session_id,
    agent: verdict.agent,
    kind: "verdict",
    status: verdict.status,
    ok: verdict.ok,
    cost_micro_usd: verdict.cost_micro_usd,
    tokens: verdict.tokens,
    exit_code: exitCode,
  };
}
