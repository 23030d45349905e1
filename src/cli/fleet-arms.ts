// Best-of-N across boxes on the CLI: what `submit --arms N [--models a,b]
// [--gate CMD]…` asks, checked before anything is queued, and a group's
// ranking as `wait GROUP` and `results GROUP` print it (a table, or one JSON
// object with --json).
import { usd } from "../bon/harvest.ts";
import { MAX_ARMS, MIN_ARMS } from "../bon/options.ts";
import { fixedWidth, totalTokens } from "../core/rank.ts";
import { safeJson } from "../core/text.ts";
import type { Ranking } from "../fleet/arms.ts";
import { rankingJson } from "../fleet/records.ts";
import { repeated } from "./common.ts";
import { usageError } from "./errors.ts";

export interface ArmsAsked {
  count: number;
  /** Round-robin over the arms; empty: every arm on the run flags' model. */
  models: string[];
  gates: string[];
}

/** An empty value given to `--flag` (`--flag ""`, `--flag=`): `repeated` drops those, a refusal must not. */
const emptyGiven = (rawArgs: string[], flag: string): boolean =>
  rawArgs.some(
    (a, i) => (a === `--${flag}` && !(rawArgs[i + 1] ?? "").trim()) || (a.startsWith(`--${flag}=`) && !a.slice(flag.length + 3).trim()),
  );

/** `--arms`, `--models`, `--gate` checked (one line each, exit 2); null without --arms. */
export function armsAsked(args: { arms?: unknown; models?: unknown; model?: unknown }, rawArgs: string[]): ArmsAsked | null {
  const gates = repeated(rawArgs, "gate");
  if (args.arms === undefined) {
    if (gates.length > 0 || emptyGiven(rawArgs, "gate"))
      throw usageError("--gate needs --arms N: gates judge the arms of a best-of-N group (submit --arms 3 --gate CMD … PROMPT)");
    if (args.models !== undefined) throw usageError("--models needs --arms N: one model per arm, round-robin");
    return null;
  }
  const text = String(args.arms).trim();
  const count = /^\d+$/.test(text) ? Number(text) : Number.NaN;
  if (!(count >= MIN_ARMS && count <= MAX_ARMS))
    throw usageError(
      `--arms must be a whole number from ${MIN_ARMS} to ${MAX_ARMS} (as for bon: past that the ranking is no longer readable), got "${text}"`,
    );
  const models =
    args.models === undefined
      ? []
      : String(args.models)
          .split(",")
          .map((m) => m.trim());
  if (models.some((m) => m === "")) throw usageError(`--models "${String(args.models)}" has an empty model: give ids separated by commas`);
  if (models.length > count)
    throw usageError(`--models names ${models.length} models for ${count} arms: at most one per arm (they go to the arms round-robin)`);
  if (models.length > 0 && args.model !== undefined)
    throw usageError("give --model (every arm's) or --models (one per arm, round-robin), not both");
  if (emptyGiven(rawArgs, "gate"))
    throw usageError("--gate was given an empty command: give a shell command that exits 0 when an arm is good");
  return { count, models, gates };
}

const num = (v: number | null): string => (v === null ? "?" : String(v));

/** The ranking as a fixed-width table, and the winner's patch command (or why there is none). */
export function rankingText(r: Ranking): string {
  const rows = [["rank", "arm", "task", "model", "verdict", "gates", "exit", "tokens", "cost $", "s", "reason"]];
  for (const a of r.arms) {
    const passed = a.gates === null ? "-" : `${a.gates.filter((g) => g.exit_code === 0).length}/${a.gates.length}`;
    rows.push([
      String(a.rank),
      String(a.arm),
      a.task,
      a.model ?? "(default)",
      a.green ? "green" : "red",
      passed,
      num(a.exit_code),
      num(totalTokens(a.tokens)),
      usd(a.cost_micro_usd),
      a.seconds === null ? "?" : a.seconds.toFixed(1),
      a.reason.slice(0, 70),
    ]);
  }
  const winner =
    r.winner === null
      ? "no arm is green: no winner"
      : `winner: arm ${r.winner.arm}; its patch: agentport results ${r.winner.task} --patch | git apply --index`;
  return `${fixedWidth(rows, new Set([0, 1, 6, 7, 8, 9]))}\n${winner}`;
}

export const rankingOut = (r: Ranking, json: unknown): string => (json ? safeJson(rankingJson(r)) : rankingText(r));
