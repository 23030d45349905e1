// The ledger's rows, shared by every backend: the columns of each table (one
// list, from which the statements and the export format, ledger-export.ts,
// are made) and the results the interface hands out.
//
// Adding a column: a migration in ledger-schema.ts (addColumns), and the
// column here (in sessionColumns or phaseStart/phaseOutcome, `laterText` or
// a schema with `.default(null)`, so that older exports still import), with
// the value that fills it (in ledger-sql.ts; a finish's: ledger-convert.ts).
// Statements, the export and the import merge follow from these lists, on
// every engine.
import { AgentportError, type ErrorKind } from "../core/errors.ts";
import { isAbsolute } from "node:path";
import { SUMMED, type Summed } from "../core/totals.ts";
import type { z } from "zod";
import type { Zod } from "../core/lazy-schema.ts";
import type { Changes } from "../core/evidence.ts";
import { ChangesSchema, STATUSES, type Status, type Tokens, type Verdict } from "../core/verdict.ts";
import { AGENT_NAMES } from "../core/agents.ts";

export type AgentName = Verdict["agent"];
export const AGENTS: readonly AgentName[] = AGENT_NAMES;

/** Ids and agent session ids shorter than this only resolve when typed in full. */
export const MIN_PREFIX = 4;

/** A ledger problem worth a plain message: bad input, an unknown row, an unusable file or server. */
export class LedgerError extends AgentportError {
  constructor(message: string, options: { cause?: unknown } = {}, kind: ErrorKind = "internal") {
    super(kind, message, options);
  }
}

/** The ledger could not be reached (a server down, a connection lost past its retries): an environment fault, exit 5. */
export class LedgerUnreachable extends LedgerError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super(message, options, "ledger_unreachable");
  }
}

// Each column with its schema's recipe: the lists of names are read at start-up
// (the statements), the schemas only made when an import parses an export.
export type Column = (z: Zod) => z.ZodType;
const text = (z: Zod) => z.string().nullable();
/** A text column newer than the first ledgers: absent from older ledgers and exports. */
export const laterText = (z: Zod) => text(z).default(null);
/** A count: a whole number the readers hold exactly (at most 2^53 - 1; summed as doubles, never overflowing). */
export const count = (z: Zod) => z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).nullable();
/** A phase's seconds: bounded, so that a session's sum stays a finite double on every engine. */
export const MAX_SECONDS = 1e9;
const facts = (z: Zod) => z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable();

/** The sessions table, in column order. */
export const sessionColumns = {
  id: (z) => z.string().min(1), // agentport's id: a uuid chosen before spawn
  agent: (z) => z.enum(AGENTS as [AgentName, ...AgentName[]]),
  cwd: (z) => z.string().refine((p) => isAbsolute(p), "an absolute path"), // the birth folder
  model: text,
  agent_session_id: text, // pi's or claude's own id, bound later (may equal id)
  session_file: text,
  session_dir: text,
  parent_id: text, // clones
  phase: text, // $AGENTPORT_PHASE at declaration
  run_id: text, // $AGENTPORT_RUN_ID at declaration
  profile: text,
  declared_at: (z) => z.string().min(1),
  // 3: the birth host (absent from older ledgers and exports).
  host: laterText, // its hostname, for people
  machine_id: laterText, // its stable id, for the birth-place rule
  // 4: the request it was born with, as JSON (absent from older ledgers and exports).
  request: laterText,
  // 10: when the row came in by `import` (null: born here). An imported request is data: resume takes it only when told to.
  imported_at: laterText,
  // 11: the first line of its first prompt, redacted and cut (absent from older ledgers and exports).
  title: laterText,
} satisfies Record<string, Column>;

/** The phases table after its id and session_id, in column order: what a start writes, then what a finish writes. */
const phaseStart = {
  seq: (z) => z.number().int().positive(),
  run_id: text,
  name: text,
  kind: text,
  started_at: (z) => z.string().min(1),
  /**
   * Who runs the phase: agentport's pid, its `boot:start` time and its host.
   * A later command finishes the phase as interrupted once that process is
   * gone (proc.ts runnerState). Absent in exports older than these columns.
   */
  runner_pid: (z) => z.number().int().nullable().default(null),
  runner_start: laterText,
  runner_host: laterText,
  /** The agent's process group (its leader's pid), once it is started. */
  agent_pgid: (z) => z.number().int().nullable().default(null),
  /** Its leader's `boot:start` time: the group is the agent's only while that process (or the group it left) lives. */
  agent_start: laterText,
  /** The phase's run folder (absolute); null before these columns and for phases without one. */
  run_dir: laterText,
} satisfies Record<string, Column>;
/** The outcome: null until the phase finishes. */
const phaseOutcome = {
  ended_at: text,
  status: (z) => z.enum(STATUSES).nullable(),
  ok: (z) => z.boolean().nullable(),
  tokens_in: count,
  tokens_out: count,
  tokens_cache_read: count,
  tokens_cache_write: count,
  cost_micro_usd: count,
  seconds: (z) => z.number().nonnegative().max(MAX_SECONDS).nullable(),
  stop_reason: text,
  failure: text,
  /** Supervision and fault facts: flat scalars. */
  details: facts,
  /** The model that really ran (absent from older exports). */
  observed_model: laterText,
  /** A parked phase: when its usage limit resets (RFC 3339; absent from older exports). */
  resume_after: laterText,
  /** reported, derived or unknown: where cost_micro_usd came from (absent from older exports). */
  cost_source: laterText,
  /** The agent's version that ran the phase (absent from older exports). */
  agent_version: laterText,
  /** What the phase changed in its folder, as the verdict's `changes` (null outside git; absent from older exports). */
  changes: () => ChangesSchema.nullable().default(null),
  /** Stray descendants ended with the phase (the verdict's summary.reaped; null: none, or before this column). */
  reaped: (z) => count(z).default(null),
} satisfies Record<string, Column>;
export const phaseColumns = { ...phaseStart, ...phaseOutcome };

type Shape<C extends Record<string, Column>> = { [K in keyof C]: ReturnType<C[K]> };
/** The columns' schemas, as a zod object's shape. */
export function shape<C extends Record<string, Column>>(z: Zod, columns: C): Shape<C> {
  return Object.fromEntries(Object.entries(columns).map(([name, column]) => [name, column(z)])) as Shape<C>;
}

// A type, not an interface: it binds as a named-parameter record.
type Row<C extends Record<string, Column>> = { [K in keyof C]: z.infer<ReturnType<C[K]>> };
export type SessionRow = Row<typeof sessionColumns>;
export type PhaseRow = { id: number; session_id: string } & Row<typeof phaseColumns>;

export const SESSION_COLUMNS = Object.keys(sessionColumns) as (keyof SessionRow)[];
/** What identifies a session's birth: an import must agree on these, never overwrite them. */
export const SESSION_IDENTITY = ["id", "agent", "cwd", "declared_at"] as const satisfies readonly (keyof SessionRow)[];
/** What a resume acts on (and the import mark): only a birth here or an import of the whole row sets them, never a merge. */
const SESSION_ACTED_ON = ["request", "profile", "imported_at"] as const satisfies readonly (keyof SessionRow)[];
/** The columns an import fills when they are empty here. */
export const SESSION_MERGED = SESSION_COLUMNS.filter((c) => !([...SESSION_IDENTITY, ...SESSION_ACTED_ON] as readonly string[]).includes(c));
export const PHASE_COLUMNS = Object.keys(phaseColumns) as (keyof typeof phaseColumns)[];
/** The columns a finish writes. */
export const PHASE_OUTCOME = Object.keys(phaseOutcome) as (keyof typeof phaseOutcome)[];

/** A phase as stored: booleans as 0/1, the facts and the changes as JSON text (the same on every backend). */
export type PhaseRecord = Omit<PhaseRow, "ok" | "details" | "changes"> & {
  ok: number | null;
  details: string | null;
  changes: string | null;
};
export type Outcome = Pick<PhaseRecord, (typeof PHASE_OUTCOME)[number]>;

/** Over a session's phases. A sum covers the finished phases, and is null if any of them lacks the value (or none finished). */
export type SessionTotals = Record<Summed, number | null> & {
  phase_count: number;
  /** The status of the highest-seq phase: null if it has not finished (or there is none). */
  last_status: Status | null;
};
export { SUMMED };

export type SessionWithTotals = SessionRow & { totals: SessionTotals };
export type Totalled = SessionRow & { [K in keyof SessionTotals as `t_${K}`]: SessionTotals[K] };

export type Resolution = { kind: "found"; session: SessionRow } | { kind: "ambiguous"; candidates: SessionRow[] } | { kind: "unknown" };

export interface ProbeRow {
  path: string;
  size: number;
  mtime_ms: number;
  data: unknown;
  probed_at: string;
}

export interface FinishPhaseInput {
  status: Status;
  ok: boolean;
  tokens: Tokens | null;
  costMicroUsd: number | null;
  seconds: number | null;
  stopReason: string | null;
  failure: string | null;
  details?: Record<string, string | number | boolean> | null;
  /** The model the agent reported running (claude's system/init, pi's assistant messages). */
  observedModel?: string | null;
  /** A parked phase: when its usage limit resets (RFC 3339). */
  resumeAfter?: string | null;
  /** reported, derived or unknown. */
  costSource?: string | null;
  /** The agent's version. */
  agentVersion?: string | null;
  /** What the phase changed in its folder (null outside git). */
  changes?: Changes | null;
  /** Stray descendants ended with the phase, when there were any. */
  reaped?: number | null;
}

/** How a phase that ended without a verdict is finished: its status and why, nothing counted (tokens and cost unknown, never 0). */
export function endedUncounted(
  status: Status,
  failure: string,
  seconds: number | null,
  details?: Record<string, string | number | boolean>,
): FinishPhaseInput {
  return { status, ok: false, tokens: null, costMicroUsd: null, seconds, stopReason: null, failure, ...(details ? { details } : {}) };
}

export interface ImportCounts {
  sessions_added: number;
  /** Already in the ledger: empty columns filled, nothing overwritten. */
  sessions_merged: number;
  phases_added: number;
  /** Running here, finished in the import: the finish was taken. */
  phases_finished: number;
  phases_unchanged: number;
}
