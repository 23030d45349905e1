// `agentport bon --dry-run`: the ranking proved on a fictional batch, zero tokens,
// no pi, no git. The same code ranks a real batch (src/core/rank.ts).
import { winnerOf } from "../core/rank.ts";
import { rankRecords, type ArmRecord } from "./harvest.ts";

export interface DryOutcome {
  ok: boolean;
  /** The fictional batch, ranked. */
  ranked: (ArmRecord & { rank: number })[];
  /** The properties that held, and those that did not. */
  checks: { name: string; ok: boolean }[];
}

function arm(arm: number, verdict: ArmRecord["verdict"], cost: number | null, seconds: number | null, reason = ""): ArmRecord {
  return {
    arm,
    agent: "pi",
    model: "fictional/model",
    session_id: null,
    agent_session_id: null,
    session_file: null,
    run_session_id: null,
    cwd: ".",
    verdict,
    status: verdict === "green" ? "completed" : verdict === "not_run" ? null : "failed",
    failure_kind: null,
    tokens: cost === null ? null : { input: Math.round(cost / 1.5), output: 0, cache_read: 0, cache_write: 0 },
    cost_micro_usd: cost,
    cost_source: cost === null ? "unknown" : "reported",
    refused: [],
    seconds,
    patch: verdict === "not_run" ? null : `arm-${arm}.patch`,
    patch_bytes: verdict === "not_run" ? 0 : 900 + arm * 100,
    changed_files: [],
    ignored_changes: [],
    wrap_up: null,
    wrap_up_finished: null,
    reason,
  };
}

/** The fictional batch: a cheap red arm, two greens at different costs, a green of unknown cost, one that never ran. */
export const DRY_BATCH: ArmRecord[] = [
  arm(1, "red", 50_000, 60, "gate `bun test` exited 1: 1 fail"),
  arm(2, "green", 220_000, 140),
  arm(3, "green", 190_000, 170),
  arm(4, "green", null, 90),
  arm(5, "not_run", null, null, "not run: the batch stopped"),
];

export function dryRun(): DryOutcome {
  const order = (arms: ArmRecord[]) =>
    rankRecords(arms)
      .map((a) => a.arm)
      .join(",");
  const green = (a: ArmRecord) => ({ ...a, green: a.verdict === "green", costMicroUsd: a.cost_micro_usd });
  const ranked = rankRecords(DRY_BATCH);
  const checks = [
    {
      name: "green first, then the cheapest; an unknown cost after the known ones; a red arm after every green",
      ok: order(DRY_BATCH) === "3,2,4,1,5",
    },
    { name: "the same cost: the fastest first", ok: order([arm(1, "green", 100, 30), arm(2, "green", 100, 20)]) === "2,1" },
    {
      name: "everything equal: the lower arm number first (a total, stable order)",
      ok: order([arm(2, "green", 100, 20), arm(1, "green", 100, 20)]) === "1,2",
    },
    {
      name: "an all-red batch is ranked too, and has no winner",
      ok:
        order([arm(1, "red", 300, 5), arm(2, "red", 100, 9)]) === "2,1" &&
        winnerOf(rankRecords([arm(1, "red", 300, 5)]).map(green)) === null,
    },
    { name: "the winner is the first green", ok: winnerOf(ranked.map(green))?.arm === 3 },
  ];
  return { ok: checks.every((c) => c.ok), ranked, checks };
}
