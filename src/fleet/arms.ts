// A best-of-N group's harvest once every arm has reported: each arm judged
// (green: its run ended done with exit 0 and every gate exited 0), then
// ranked by bon's one rule (src/core/rank.ts: green first, then the
// cheapest, then the fastest, then the arm number). Pure.
import { EXIT } from "../core/exit.ts";
import { rankArms, winnerOf } from "../core/rank.ts";
import type { Tokens } from "../core/verdict.ts";
import type { GateResult, Task } from "./db.ts";
import type { Group } from "./groups.ts";
import { isFinal, type TaskState } from "./rules.ts";

export interface RankedArm {
  rank: number;
  arm: number;
  task: string;
  /** The model it ran on as submitted, or null for the agent's default. */
  model: string | null;
  state: TaskState;
  exit_code: number | null;
  green: boolean;
  /** Each gate that ran (the first red one ends them); null: none ran (none given, or the run did not end well). */
  gates: GateResult[] | null;
  cost_micro_usd: number | null;
  tokens: Tokens | null;
  /** From its agent's start to its result (the gates included); null when its agent never started. */
  seconds: number | null;
  /** Empty when green; else the first thing that failed. */
  reason: string;
}

export interface Ranking {
  group: string;
  key: string | null;
  /** Best first. */
  arms: RankedArm[];
  /** The first arm when it is green, else null. */
  winner: { arm: number; task: string; model: string | null } | null;
}

/** Why a group has no ranking yet (its first arm not final), or null once every arm has reported. */
export function pending(group: Group): string | null {
  const open = group.tasks.find((t) => !isFinal(t.state));
  return open === undefined ? null : `arm ${open.arm} (task ${open.id}) is still ${open.state}`;
}

/** Why an arm is not green, or "" when it is. */
function redReason(t: Task): string {
  if (t.state !== "done") return `the task ended ${t.state}`;
  if (t.exit_code !== 0) {
    const status = (t.verdict as { status?: unknown } | null)?.status;
    return `the run exited ${t.exit_code}${typeof status === "string" ? ` (${status})` : ""}`;
  }
  const ran = t.gate_results ?? [];
  const red = ran.find((g) => g.exit_code !== 0);
  if (red !== undefined) return `gate \`${red.command}\` ${red.exit_code === null ? "did not finish" : `exited ${red.exit_code}`}`;
  return ran.length < t.gates.length ? "its gates did not run" : "";
}

const seconds = (t: Task): number | null =>
  t.started_at === null || t.finished_at === null ? null : (Date.parse(t.finished_at) - Date.parse(t.started_at)) / 1000;

function armOf(t: Task): Omit<RankedArm, "rank"> {
  const v = (t.verdict ?? {}) as { cost_micro_usd?: number | null; tokens?: Tokens | null };
  const reason = redReason(t);
  return {
    arm: t.arm ?? 0,
    task: t.id,
    model: typeof t.request.model === "string" ? t.request.model : null,
    state: t.state,
    exit_code: t.exit_code,
    green: reason === "",
    gates: t.gate_results,
    cost_micro_usd: v.cost_micro_usd ?? null,
    tokens: v.tokens ?? null,
    seconds: seconds(t),
    reason,
  };
}

/** The group's arms ranked, best first, and its winner (the first when green). */
export function rankGroup(group: Group): Ranking {
  const ranked = rankArms(group.tasks.map(armOf).map((a) => ({ ...a, costMicroUsd: a.cost_micro_usd })));
  const arms = ranked.map(({ costMicroUsd: _c, ...a }, i) => ({ rank: i + 1, ...a }));
  const best = winnerOf(ranked);
  return {
    group: group.id,
    key: group.key,
    arms,
    winner: best === null ? null : { arm: best.arm, task: best.task, model: best.model },
  };
}

/** A ranking's exit code, as bon's: 0 with a winner, 1 when no arm is green. */
export const rankingExit = (r: Ranking): number => (r.winner === null ? EXIT.failed : EXIT.ok);
