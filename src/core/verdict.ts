// The verdict: one run's outcome, as the `--json` contract prints it.
import { z } from "zod";
import { EXIT } from "./exit.ts";

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
] as const;
export type Status = (typeof STATUSES)[number];

export const RefusedSchema = z.object({
  kind: z.enum(["permission", "question", "dialog"]),
  subject: z.string(),
});
export type Refused = z.infer<typeof RefusedSchema>;

export const TokensSchema = z.object({
  input: z.number().int().nonnegative(),
  output: z.number().int().nonnegative(),
  cache_read: z.number().int().nonnegative(),
  cache_write: z.number().int().nonnegative(),
});
export type Tokens = z.infer<typeof TokensSchema>;

export const VerdictSchema = z.object({
  agent: z.enum(["claude", "pi"]),
  session_id: z.string().nullable(),
  status: z.enum(STATUSES),
  ok: z.boolean(),
  text: z.string().nullable(),
  envelope: z.unknown().nullable(),
  failure: z.string().nullable(),
  stop_reason: z.string().nullable(),
  cost_micro_usd: z.number().int().nonnegative().nullable(),
  tokens: TokensSchema.nullable(),
  refused: z.array(RefusedSchema),
  /** The failure points at the environment (auth, quota, network, a missing binary): exit 5. */
  env_fault: z.boolean(),
  fault: z.object({ kind: z.string(), evidence: z.string() }).nullable(),
  summary: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
});
export type Verdict = z.infer<typeof VerdictSchema>;


export function exitCodeFor(verdict: Pick<Verdict, "status" | "ok" | "env_fault">): number {
  if (verdict.ok) return EXIT.ok;
  switch (verdict.status) {
    case "timeout":
    case "stalled":
    case "over_budget":
    case "looping":
      return EXIT.supervision;
    case "aborted":
    case "interrupted":
      return EXIT.interrupted;
    case "refused":
      return EXIT.refused;
    default:
      return verdict.env_fault ? EXIT.environment : EXIT.failed;
  }
}
