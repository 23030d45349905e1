// The export format (`sessions --json`, `show --json`, read back by `import`):
// one session per line, its columns, derived totals, and its phases. Tokens
// are spelled as in the verdict and progress records, one object
// `{input, output, cache_read, cache_write}`; the ledger's columns stay flat.
// An export written before that spelling (flat `tokens_in`, …) still imports.
// A phase's `id` is local to the ledger that wrote it and is not kept (a phase
// is known by session and seq).
import type { z } from "zod";
import { lazySchema, type Zod } from "../core/lazy-schema.ts";
import { STATUSES } from "../core/verdict.ts";
import type { Totals } from "../core/totals.ts";
import { count, phaseColumns, sessionColumns, shape, type PhaseRow, type SessionRow } from "./ledger-rows.ts";

/** The verdict's token names and the ledger column each is kept in. */
const TOKEN_COLUMNS = {
  input: "tokens_in",
  output: "tokens_out",
  cache_read: "tokens_cache_read",
  cache_write: "tokens_cache_write",
} as const;
type TokenColumn = (typeof TOKEN_COLUMNS)[keyof typeof TOKEN_COLUMNS];
const FLAT = Object.values(TOKEN_COLUMNS) as TokenColumn[];

/** A phase's or a total's tokens: null when none is known; a member not recorded is null. */
export type TokensJson = { input: number | null; output: number | null; cache_read: number | null; cache_write: number | null } | null;

const tokensSchema = (z: Zod) =>
  z
    .strictObject({ input: count(z), output: count(z), cache_read: count(z), cache_write: count(z) })
    .nullable()
    .default(null);

function tokensOf(flat: Partial<Record<TokenColumn, number | null>>): TokensJson {
  const tokens = {
    input: flat.tokens_in ?? null,
    output: flat.tokens_out ?? null,
    cache_read: flat.tokens_cache_read ?? null,
    cache_write: flat.tokens_cache_write ?? null,
  };
  return Object.values(tokens).every((v) => v === null) ? null : tokens;
}

function withoutFlat<T extends object>(row: T): Omit<T, TokenColumn> {
  const copy = { ...row } as Record<string, unknown>;
  for (const column of FLAT) delete copy[column];
  return copy as Omit<T, TokenColumn>;
}

/** An export older than the one spelling carries the flat columns and no `tokens`: read it as the new form. */
function fromFlat(value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value) || "tokens" in value) return value;
  const row = value as Record<string, unknown>;
  if (!FLAT.some((c) => c in row)) return value;
  const numbers = Object.fromEntries(FLAT.map((c) => [c, typeof row[c] === "number" ? row[c] : null])) as Record<
    TokenColumn,
    number | null
  >;
  const odd = FLAT.find((c) => row[c] !== undefined && row[c] !== null && typeof row[c] !== "number");
  // A flat count that is not a number stays where the schema names it (`tokens_in`), so the error says which.
  return odd === undefined ? { ...withoutFlat(row), tokens: tokensOf(numbers) } : value;
}

const phaseObject = (z: Zod) => {
  const { tokens_in, tokens_out, tokens_cache_read, tokens_cache_write, ...rest } = shape(z, phaseColumns);
  return z.strictObject({ id: z.number().int().optional(), session_id: z.string().optional(), ...rest, tokens: tokensSchema(z) });
};

/** One phase as `sessions --json` prints it: the contract (`agentport schema phase`). */
export const PhaseJsonSchema = lazySchema(phaseObject);

/** One phase of an export, read back as the ledger keeps it (flat columns). */
export const ExportedPhaseSchema = lazySchema((z) =>
  z
    .unknown()
    .transform(fromFlat)
    .pipe(
      phaseObject(z).transform(({ tokens, ...rest }) => ({
        ...rest,
        tokens_in: tokens?.input ?? null,
        tokens_out: tokens?.output ?? null,
        tokens_cache_read: tokens?.cache_read ?? null,
        tokens_cache_write: tokens?.cache_write ?? null,
      })),
    ),
);
export type ExportedPhase = z.infer<typeof ExportedPhaseSchema>;

const sessionObject = <P extends z.ZodType>(z: Zod, phase: P) =>
  z.strictObject({ ...shape(z, sessionColumns), totals: z.unknown().optional(), phases: z.array(phase).default([]) });

/** Over the session's finished phases: what `totalsOf` sums, tokens spelled as in the verdict. */
const totalsSchema = (z: Zod) =>
  z.strictObject({
    tokens: tokensSchema(z),
    cost_micro_usd: z.number().nonnegative().nullable(),
    seconds: z.number().nonnegative().nullable(),
    phase_count: z.number().int().nonnegative(),
    last_status: z.enum(STATUSES).nullable(),
    partial: z.boolean(),
  });

/** A line of `sessions --json` and what `show --json` prints: the contract (`agentport schema session`). */
export const SessionJsonSchema = lazySchema((z) => sessionObject(z, PhaseJsonSchema).extend({ totals: totalsSchema(z) }));

/** A line of an export, read back; its totals are derived, never imported. */
export const ExportedSessionSchema = lazySchema((z) =>
  sessionObject(z, ExportedPhaseSchema).superRefine((s, ctx) => {
    const seen = new Set<number>();
    s.phases.forEach((p, i) => {
      if (p.session_id !== undefined && p.session_id !== s.id)
        ctx.addIssue({ code: "custom", path: ["phases", i, "session_id"], message: `is not the session's id ${s.id}` });
      if (seen.has(p.seq)) ctx.addIssue({ code: "custom", path: ["phases", i, "seq"], message: `seq ${p.seq} appears twice` });
      seen.add(p.seq);
    });
  }),
);
export type ExportedSession = z.infer<typeof ExportedSessionSchema>;

export type SessionJson = z.infer<typeof SessionJsonSchema>;

/** A session, its totals and phases as the export prints them. */
export function sessionJson(row: SessionRow & { totals: Totals; phases: PhaseRow[] }): SessionJson {
  const { totals, phases, ...session } = row;
  return {
    ...session,
    totals: {
      tokens: tokensOf(totals),
      cost_micro_usd: totals.cost_micro_usd,
      seconds: totals.seconds,
      phase_count: totals.phase_count,
      last_status: totals.last_status as SessionJson["totals"]["last_status"],
      partial: totals.partial,
    },
    phases: phases.map((p) => ({ ...withoutFlat(p), tokens: tokensOf(p) })),
  };
}
