// The verdict: one run's outcome, as the `--json` contract prints it.
import type { z } from "zod";
import { EXIT } from "./exit.ts";
import { AGENT_NAMES } from "./agents.ts";
import { FAILURE_KINDS, STOP_CAUSES, type StopCause } from "./failure.ts";
import { lazySchema } from "./lazy-schema.ts";
import { COST_SOURCES } from "./prices.ts";

export { EXIT };

export const STATUSES = [
  "completed",
  "failed",
  "timeout",
  "stalled",
  "crashed",
  "over_budget",
  "looping",
  "aborted",
  "refused",
  /** The runner (agentport) was gone before the phase finished: killed, or its machine went down. Found by a later command. */
  "interrupted",
  /** A quota wall (a usage limit that resets later) ended the run: resume after `resume_after`. */
  "parked",
] as const;
export type Status = (typeof STATUSES)[number];

/** The status of a run agentport stopped before it finished, per cause. */
export const STOP_STATUS: Record<StopCause, Status> = {
  timeout: "timeout",
  stall: "stalled",
  loop: "looping",
  budget: "over_budget",
  cost: "over_budget",
  // --max-turns on pi: the run did not finish its work (failure kind turn_limit).
  turns: "failed",
  interrupt: "aborted",
  wall: "parked",
};

/** The exit code of each status that is not a success; an environment fault turns failures and stops into 5. */
const STATUS_EXIT: Record<Exclude<Status, "completed">, number> = {
  failed: EXIT.failed,
  crashed: EXIT.failed,
  timeout: EXIT.supervision,
  stalled: EXIT.supervision,
  over_budget: EXIT.supervision,
  looping: EXIT.supervision,
  aborted: EXIT.interrupted,
  refused: EXIT.refused,
  interrupted: EXIT.interrupted,
  parked: EXIT.parked,
};

export const RefusedSchema = lazySchema((z) =>
  z.object({
    kind: z.enum(["permission", "question", "dialog"]),
    subject: z.string(),
  }),
);
export type Refused = z.infer<typeof RefusedSchema>;

export const TokensSchema = lazySchema((z) =>
  z.object({
    input: z.number().int().nonnegative(),
    output: z.number().int().nonnegative(),
    cache_read: z.number().int().nonnegative(),
    cache_write: z.number().int().nonnegative(),
  }),
);
export type Tokens = z.infer<typeof TokensSchema>;

export const FailureSchema = lazySchema((z) =>
  z.object({
    kind: z.enum(FAILURE_KINDS),
    message: z.string(),
    cause: z.enum(STOP_CAUSES).optional(),
  }),
);

/**
 * The version of the `--json` contract: the verdict's and each progress
 * record's fields. A change that removes, renames or retypes a field bumps it
 * (README "The `--json` verdict" says what changed); a new field does not.
 */
export const SCHEMA_VERSION = 1;

export const VerdictSchema = lazySchema((z) =>
  z.object({
    /** SCHEMA_VERSION; absent from verdicts written before it existed. */
    schema_version: z.number().int().positive().default(SCHEMA_VERSION),
    agent: z.enum(AGENT_NAMES),
    session_id: z.string().nullable(),
    status: z.enum(STATUSES),
    ok: z.boolean(),
    text: z.string().nullable(),
    envelope: z.unknown().nullable(),
    failure: FailureSchema.nullable(),
    stop_reason: z.string().nullable(),
    cost_micro_usd: z.number().int().nonnegative().nullable(),
    /** reported (the agent said it), derived (tokens × a price), unknown (cost null, never 0). */
    cost_source: z.enum(COST_SOURCES),
    tokens: TokensSchema.nullable(),
    refused: z.array(RefusedSchema),
    /** The failure points at the environment (auth, quota, network, a missing binary): exit 5. */
    env_fault: z.boolean(),
    fault: z.object({ kind: z.string(), evidence: z.string() }).nullable(),
    /** A parked run: when its usage limit resets (RFC 3339), null when unknown or not parked. */
    resume_after: z.string().nullable(),
    /** The agent's version (its cached probe; claude's system/init), null when unknown. */
    agent_version: z.string().nullable(),
    /** Whether that version is inside the range agentport was tested with (src/core/drift.ts); false when unknown. */
    agent_version_tested: z.boolean(),
    summary: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    /** A live run: whether the agent ran under bwrap (--isolate). Absent from a replay, which runs nothing. */
    isolated: z.boolean().optional(),
  }),
);
export type Verdict = z.infer<typeof VerdictSchema>;

export function exitCodeFor(verdict: Pick<Verdict, "status" | "ok" | "env_fault">): number {
  if (verdict.ok) return EXIT.ok;
  // "completed" is never a failure; a verdict that says both is no success.
  const code = verdict.status === "completed" ? EXIT.failed : STATUS_EXIT[verdict.status];
  const environmental = code === EXIT.failed || code === EXIT.supervision;
  return verdict.env_fault && environmental ? EXIT.environment : code;
}
