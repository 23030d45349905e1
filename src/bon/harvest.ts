// The harvest: the arms ranked (src/core/rank.ts), the table a reviewer reads,
// `harvest.json`, and the prime paid once against N times. Pure but for the
// file it writes.
import { writeFileSync } from "node:fs";
import { secrets } from "../core/redact.ts";
import { join } from "node:path";
import { fixedWidth, rankArms, totalTokens, winnerOf } from "../core/rank.ts";
import type { WrapUpReason } from "../core/deadline.ts";
import type { FailureKind } from "../core/failure.ts";
import type { CostSource } from "../core/prices.ts";
import type { Refused, Status, Tokens } from "../core/verdict.ts";
import type { IgnoredChange } from "./clone.ts";
import type { ArmsFrom, BonAgentName } from "./names.ts";

/** 2: arms in workspaces (mode sequential | parallel), ignored_changes, applied. 3: agent, sessions, agent_session_id (was pi_session_id). 4: isolated, checkout. 5: every agent, cross-agent batches (agent null), arms_from; per turn agent, cost_source, refused, run_session_id. 7: per arm wrap_up, wrap_up_finished (--grace). */
export const HARVEST_VERSION = 7;

/** What every turn of the batch (the prime, an arm) records besides its own fields. */
export interface TurnFacts {
  agent: BonAgentName;
  /** How the cost was known: reported by the agent, derived from a price, unknown. */
  cost_source: CostSource;
  /** The requests refused during the turn (a dialog nobody could answer, a denied tool): why an arm that looks like a model failure may have failed. */
  refused: Refused[];
}
export const HARVEST_FILE = "harvest.json";

export type ArmVerdict = "green" | "red" | "not_run";

export interface ArmRecord extends TurnFacts {
  arm: number;
  /** The route the arm ran on, or null for pi's default model. */
  model: string | null;
  /** agentport's session id (the ledger row). */
  session_id: string | null;
  /** The agent's own session id: pi's clone or fork, opencode's `ses_…` copy or fork. */
  agent_session_id: string | null;
  session_file: string | null;
  /** The agentport session the arm's turn ran as, through `agentport run`'s path (`agentport resume` continues it); null for pi's and opencode's batch sessions. */
  run_session_id: string | null;
  /** Where the arm worked: its workspace in the run folder (removed at the end). */
  cwd: string;
  verdict: ArmVerdict;
  /** The pi turn's status (completed, failed, timeout, …), or null when no turn ran. */
  status: Status | null;
  /** The pi turn's failure kind (core/failure.ts), or null when the turn succeeded or did not run. */
  failure_kind: FailureKind | null;
  /** The arm's own (after minus at clone), spelled as in the verdict. */
  tokens: Tokens | null;
  cost_micro_usd: number | null;
  /** The whole arm: clone, turn, gates, harvest, reset. */
  seconds: number | null;
  /** The patch file (absolute), or null when the arm did not get that far. */
  patch: string | null;
  patch_bytes: number;
  changed_files: string[];
  /** Ignored files the arm added, changed or deleted: in no patch, never brought to the user. */
  ignored_changes: IgnoredChange[];
  /** --grace: why the arm's turn was told to wrap up (`timeout`, `budget`; its verdict's summary.wrap_up), else null. */
  wrap_up: WrapUpReason | null;
  /** With a wrap-up told: whether the turn ended before the supervisor stopped it (summary.wrap_up_finished), else null. */
  wrap_up_finished: boolean | null;
  /** Empty when green; else the first thing that failed. */
  reason: string;
}

export interface PrimeRecord extends TurnFacts {
  session_id: string;
  agent_session_id: string | null;
  session_file: string | null;
  /** As an arm's: the prime's run through `agentport run`'s path, or null. */
  run_session_id: string | null;
  model: string | null;
  status: Status | null;
  ok: boolean;
  tokens: Tokens | null;
  cost_micro_usd: number | null;
  seconds: number;
  /** The prime envelope's summary: what the arms will change. */
  summary: string | null;
  reason: string;
}

export interface Harvest {
  version: number;
  batch_id: string;
  spec: string;
  repo: string;
  /** The commit every arm started from and every patch is against. */
  base: string;
  /** sequential: one workspace reset between arms; parallel: one per arm. */
  mode: "sequential" | "parallel";
  /** The batch's agent; null: a cross-agent batch (each arm names its agent). */
  agent: BonAgentName | null;
  /** How the arms' sessions were made: pi's RPC mode, a one-shot process each, or one server for the batch. */
  sessions: SessionsKind;
  /** Where each arm started: a clone of the prime's session, a fork of it, or the spec (no prime: the agent cannot start a session from another, or the batch is cross-agent). */
  arms_from: ArmsFrom;
  run_dir: string;
  started_at: string;
  ended_at: string;
  prime: PrimeRecord | null;
  /** Best first. */
  arms: (ArmRecord & { rank: number })[];
  winner: { arm: number; model: string | null; patch: string; apply: string } | null;
  /** The prime's tokens paid once, against once per arm had each arm been an independent run. */
  prime_paid: PrimePaid | null;
  /** The prime plus every arm. */
  totals: { tokens: Tokens | null; cost_micro_usd: number | null };
  /** Why the batch stopped early (a failed prime, a failed clone, an interrupt), or null. */
  stopped: string | null;
  interrupted: boolean;
  /** With --apply: whether the winner's patch was applied to the user's checkout (null: not asked, or no winner). */
  applied: { ok: boolean; reason: string } | null;
  /** Whether the agent ran under bwrap (the checkout read-only to it). */
  isolated: boolean;
  /** The user's checkout before and after the arms: what changed, one line each (`checked: false`: it could not be read, so nothing is known). */
  checkout: CheckoutCheck;
}

export interface CheckoutCheck {
  checked: boolean;
  changed: string[];
}

export interface PrimePaid {
  arms: number;
  tokens_once: number | null;
  tokens_n_times: number | null;
  tokens_saved: number | null;
  cost_micro_usd_once: number | null;
  cost_micro_usd_n_times: number | null;
  cost_micro_usd_saved: number | null;
}

export { totalTokens };

const sum = (values: (number | null)[]): number | null =>
  values.some((v) => v === null) ? null : values.reduce<number>((a, v) => a + (v ?? 0), 0);
/** Member by member; null when any part's tokens are unknown (a sum of the known ones would pass for the whole). */
const sumTokens = (values: (Tokens | null)[]): Tokens | null =>
  values.some((v) => v === null)
    ? null
    : values.reduce<Tokens>(
        (a, v) => ({
          input: a.input + v!.input,
          output: a.output + v!.output,
          cache_read: a.cache_read + v!.cache_read,
          cache_write: a.cache_write + v!.cache_write,
        }),
        { input: 0, output: 0, cache_read: 0, cache_write: 0 },
      );

/** The arms that ran, ranked; the ones that did not run after them, in order. */
export function rankRecords(arms: ArmRecord[]): (ArmRecord & { rank: number })[] {
  const ranked = rankArms(arms.map((a) => ({ ...a, green: a.verdict === "green", costMicroUsd: a.cost_micro_usd })));
  return ranked.map(({ green: _g, costMicroUsd: _c, ...a }, i) => ({ ...a, rank: i + 1 }));
}

export function primePaid(prime: PrimeRecord | null, arms: number): PrimePaid | null {
  if (prime === null) return null;
  const times = (v: number | null, n: number) => (v === null ? null : v * n);
  return {
    arms,
    tokens_once: totalTokens(prime.tokens),
    tokens_n_times: times(totalTokens(prime.tokens), arms),
    tokens_saved: times(totalTokens(prime.tokens), Math.max(0, arms - 1)),
    cost_micro_usd_once: prime.cost_micro_usd,
    cost_micro_usd_n_times: times(prime.cost_micro_usd, arms),
    cost_micro_usd_saved: times(prime.cost_micro_usd, Math.max(0, arms - 1)),
  };
}

export type SessionsKind = "rpc" | "one-shot" | "server";

export interface HarvestInput {
  batchId: string;
  agent: BonAgentName | null;
  sessions: SessionsKind;
  armsFrom: ArmsFrom;
  spec: string;
  repo: string;
  base: string;
  parallel: boolean;
  runDir: string;
  startedAt: Date;
  prime: PrimeRecord | null;
  arms: ArmRecord[];
  stopped: string | null;
  interrupted: boolean;
  isolated: boolean;
  checkout: CheckoutCheck;
}

export function buildHarvest(h: HarvestInput, now = new Date()): Harvest {
  const ranked = rankRecords(h.arms);
  const best = winnerOf(ranked.map((a) => ({ ...a, green: a.verdict === "green", costMicroUsd: a.cost_micro_usd })));
  const ran = h.arms.filter((a) => a.verdict !== "not_run");
  const parts = [...(h.prime === null ? [] : [h.prime]), ...ran];
  return {
    version: HARVEST_VERSION,
    batch_id: h.batchId,
    spec: h.spec,
    repo: h.repo,
    base: h.base,
    mode: h.parallel ? "parallel" : "sequential",
    agent: h.agent,
    sessions: h.sessions,
    arms_from: h.armsFrom,
    run_dir: h.runDir,
    started_at: h.startedAt.toISOString(),
    ended_at: now.toISOString(),
    prime: h.prime,
    arms: ranked,
    winner:
      best !== null && best.patch !== null
        ? { arm: best.arm, model: best.model, patch: best.patch, apply: `git apply --index ${shellQuote(best.patch)}` }
        : null,
    prime_paid: primePaid(h.prime, ran.length),
    totals: { tokens: sumTokens(parts.map((p) => p.tokens)), cost_micro_usd: sum(parts.map((p) => p.cost_micro_usd)) },
    stopped: h.stopped,
    interrupted: h.interrupted,
    applied: null,
    isolated: h.isolated,
    checkout: h.checkout,
  };
}

export function writeHarvest(runDir: string, harvest: Harvest): string {
  const file = join(runDir, HARVEST_FILE);
  // A file agentport writes is output too: the arms' reasons quote agents' errors.
  const safe: Harvest = { ...harvest, arms: harvest.arms.map((a) => ({ ...a, reason: secrets.text(a.reason) })) };
  writeFileSync(file, `${secrets.values(JSON.stringify(safe, null, 2))}\n`, { mode: 0o600 });
  return file;
}

/** A path as one shell word. */
export function shellQuote(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

export const usd = (micro: number | null): string => (micro === null ? "?" : (micro / 1e6).toFixed(4));
const num = (v: number | null): string => (v === null ? "?" : String(v));
const secs = (v: number | null): string => (v === null ? "?" : v.toFixed(1));

/** The ranking as a fixed-width table (for stderr). */
export function table(arms: (ArmRecord & { rank: number })[]): string {
  const rows = [["rank", "arm", "agent", "model", "verdict", "tokens", "cost $", "s", "patch B", "reason"]];
  for (const a of arms) {
    rows.push([
      String(a.rank),
      String(a.arm),
      a.agent,
      a.model ?? "(default)",
      a.verdict,
      num(totalTokens(a.tokens)),
      usd(a.cost_micro_usd),
      secs(a.seconds),
      String(a.patch_bytes),
      a.reason.slice(0, 70),
    ]);
  }
  return fixedWidth(rows, new Set([0, 1, 5, 6, 7, 8]));
}
