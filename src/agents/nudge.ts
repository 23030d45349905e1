// Envelope nudges: a turn that had to end with an envelope and ended without
// one (or with an invalid one) gets up to N short follow-up prompts in the same
// session, each one a phase of kind "nudge" in the ledger; after the last one
// the run fails with "no envelope after N nudges". Only a turn whose failure
// kind is envelope_missing or envelope_invalid is nudged: the judge gives
// those kinds only to a turn that otherwise completed, so a timeout, a crash,
// a provider error is never asked twice.
//
// One-shot agents are nudged by resuming the session (runClaude, runPi). An RPC
// caller nudges the same way in its live session: when a turn's failure is an
// envelope failure, send `nudgePrompt(...)` as the next prompt, record it as a
// phase of kind "nudge", and pass the number of nudges spent to the judge.
import { isEnvelopeFailure, type Failure } from "../core/failure.ts";
import type { Tokens, Verdict } from "../core/verdict.ts";
import { MAX_NUDGES } from "../config/schema.ts";
import type { RunOutcome } from "./phase.ts";

export { MAX_NUDGES };

export interface Attempt {
  /** 0 for the turn itself, k for the k-th nudge. */
  nudge: number;
  /** No nudge follows this turn: a missing envelope is final. */
  last: boolean;
  /** The previous turn's envelope failure (what the nudge asks to fix), else null. */
  problem: Failure | null;
}

/** The follow-up prompt: only the envelope, nothing redone. */
export function nudgePrompt(how: { tool: string } | { schema: unknown }, problem: Failure): string {
  const ask =
    "tool" in how
      ? `Call the ${how.tool} tool now with the envelope, and nothing else.`
      : `Reply now with only the envelope: one fenced \`\`\`json block matching this JSON Schema, and nothing else.\n\n${JSON.stringify(how.schema)}`;
  return `Your last turn ended without the required envelope (${problem.message}). Do not redo the work and do not change any file. ${ask}`;
}

function sum(values: (number | null)[]): number | null {
  return values.some((v) => v === null) ? null : values.reduce<number>((a, v) => a + (v ?? 0), 0);
}

function sumTokens(all: (Tokens | null)[]): Tokens | null {
  if (all.some((t) => t === null)) return null;
  const ts = all as Tokens[];
  const add = (k: keyof Tokens) => ts.reduce((a, t) => a + t[k], 0);
  return { input: add("input"), output: add("output"), cache_read: add("cache_read"), cache_write: add("cache_write") };
}

/** The last turn's verdict, with the cost and tokens of every turn and the number of nudges: a new, frozen verdict. */
function combined(outcomes: RunOutcome[]): RunOutcome {
  const last = outcomes[outcomes.length - 1] as RunOutcome;
  if (outcomes.length === 1) return last;
  const verdicts: Verdict[] = outcomes.map((o) => o.verdict);
  const verdict: Verdict = {
    ...last.verdict,
    cost_micro_usd: sum(verdicts.map((v) => v.cost_micro_usd)),
    tokens: sumTokens(verdicts.map((v) => v.tokens)),
    summary: Object.freeze({ ...last.verdict.summary, nudges: outcomes.length - 1 }),
  };
  return { ...last, verdict: Object.freeze(verdict) };
}

/** Play the turn, then up to `nudges` nudges while its envelope is missing or invalid. */
export async function withNudges(
  nudges: number,
  signal: AbortSignal | undefined,
  turn: (t: Attempt) => Promise<RunOutcome>,
): Promise<RunOutcome> {
  const n = Math.max(0, Math.min(MAX_NUDGES, Math.floor(nudges)));
  const outcomes: RunOutcome[] = [];
  let problem: Failure | null = null;
  for (let k = 0; ; k++) {
    const last = k >= n;
    const outcome = await turn({ nudge: k, last, problem });
    outcomes.push(outcome);
    const failed = outcome.verdict.failure;
    if (!isEnvelopeFailure(failed) || last || signal?.aborted) return combined(outcomes);
    problem = failed;
  }
}
