// harvest.json as a schema (`agentport schema harvest`): the Harvest type of
// harvest.ts, which must stay assignable both ways (checked below).
import type { z } from "zod";
import { FAILURE_KINDS } from "../core/failure.ts";
import { COST_SOURCES } from "../core/prices.ts";
import { lazySchema } from "../core/lazy-schema.ts";
import { RefusedSchema, STATUSES, TokensSchema } from "../core/verdict.ts";
import type { Harvest } from "./harvest.ts";
import { BON_AGENTS } from "./names.ts";

export const HarvestSchema = lazySchema((z) => {
  const count = z.number().int().nonnegative();
  const turn = {
    session_id: z.string().nullable(),
    agent_session_id: z.string().nullable(),
    session_file: z.string().nullable(),
    model: z.string().nullable(),
    status: z.enum(STATUSES).nullable(),
    tokens: TokensSchema.nullable(),
    cost_micro_usd: count.nullable(),
    reason: z.string(),
    run_session_id: z.string().nullable(),
    agent: z.enum(BON_AGENTS),
    cost_source: z.enum(COST_SOURCES),
    refused: z.array(RefusedSchema),
  };
  const prime = z.strictObject({
    ...turn,
    session_id: z.string(),
    ok: z.boolean(),
    seconds: z.number().nonnegative(),
    summary: z.string().nullable(),
  });
  const arm = z.strictObject({
    ...turn,
    arm: z.number().int().positive(),
    rank: z.number().int().positive(),
    cwd: z.string(),
    verdict: z.enum(["green", "red", "not_run"]),
    failure_kind: z.enum(FAILURE_KINDS).nullable(),
    seconds: z.number().nonnegative().nullable(),
    patch: z.string().nullable(),
    patch_bytes: count,
    changed_files: z.array(z.string()),
    ignored_changes: z.array(z.strictObject({ path: z.string(), change: z.enum(["added", "changed", "deleted"]) })),
    wrap_up: z.enum(["timeout", "budget"]).nullable(),
    wrap_up_finished: z.boolean().nullable(),
  });
  const maybe = count.nullable();
  return z.strictObject({
    version: z.number().int().positive(),
    batch_id: z.string(),
    spec: z.string(),
    repo: z.string(),
    base: z.string(),
    mode: z.enum(["sequential", "parallel"]),
    agent: z.enum(BON_AGENTS).nullable(),
    sessions: z.enum(["rpc", "one-shot", "server"]),
    arms_from: z.enum(["clone", "fork", "spec"]),
    run_dir: z.string(),
    started_at: z.string(),
    ended_at: z.string(),
    prime: prime.nullable(),
    arms: z.array(arm),
    winner: z
      .strictObject({ arm: z.number().int().positive(), model: z.string().nullable(), patch: z.string(), apply: z.string() })
      .nullable(),
    prime_paid: z
      .strictObject({
        arms: count,
        tokens_once: maybe,
        tokens_n_times: maybe,
        tokens_saved: z.number().int().nullable(),
        cost_micro_usd_once: maybe,
        cost_micro_usd_n_times: maybe,
        cost_micro_usd_saved: z.number().int().nullable(),
      })
      .nullable(),
    totals: z.strictObject({ tokens: TokensSchema.nullable(), cost_micro_usd: maybe }),
    stopped: z.string().nullable(),
    interrupted: z.boolean(),
    applied: z.strictObject({ ok: z.boolean(), reason: z.string() }).nullable(),
    isolated: z.boolean(),
    checkout: z.strictObject({ checked: z.boolean(), changed: z.array(z.string()) }),
  });
});

// The schema and the type agree, both ways: a field added to one and not the other fails the type check.
type Parsed = z.infer<typeof HarvestSchema>;
const toType = (h: Parsed): Harvest => h;
const toSchema = (h: Harvest): Parsed => h;
void toType;
void toSchema;
