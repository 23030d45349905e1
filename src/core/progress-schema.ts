// A progress record as it is written (progress.ndjson, `--progress json`):
// an event's record, a human message's (`log`, on stderr only), or the
// verdict's record that ends a run. The contract
// `agentport schema progress` prints; the writers are in progress.ts.
import { AGENT_NAMES } from "./agents.ts";
import { lazySchema } from "./lazy-schema.ts";
import { PROGRESS_KINDS } from "./progress.ts";
import { STATUSES, TokensSchema } from "./verdict.ts";

export const ProgressRecordSchema = lazySchema((z) => {
  const common = {
    schema_version: z.number().int().positive(),
    ts: z.string(),
    session_id: z.string().nullable(),
    agent: z.enum(AGENT_NAMES),
  };
  const count = z.number().int().nonnegative();
  const event = z.strictObject({
    ...common,
    kind: z.enum(PROGRESS_KINDS),
    tool: z.string().optional(),
    detail: z.string().optional(),
    thinking_tokens: count.optional(),
    tokens: TokensSchema.nullable().optional(),
    cost_micro_usd: count.nullable().optional(),
  });
  const verdict = z.strictObject({
    ...common,
    kind: z.enum(["verdict"]),
    status: z.enum(STATUSES),
    ok: z.boolean(),
    cost_micro_usd: count.nullable(),
    tokens: TokensSchema.nullable(),
    exit_code: z.number().int().nonnegative(),
  });
  const log = z.strictObject({ ...common, agent: common.agent.nullable(), kind: z.enum(["log"]), level: z.string(), message: z.string() });
  return z.union([event, log, verdict]);
});
