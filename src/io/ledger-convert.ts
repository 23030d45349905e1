// Rows between their stored form and what the ledger hands out: a finish as
// stored (its counts checked, its strings redacted), an exported row as
// stored, and stored numbers, JSON and per-session totals read back.
import { resolve } from "node:path";
import { secrets } from "../core/redact.ts";
import { SUMMED } from "../core/totals.ts";
import type { ExportedPhase, ExportedSession } from "./ledger-export.ts";
import {
  LedgerError,
  PHASE_COLUMNS,
  SESSION_COLUMNS,
  type FinishPhaseInput,
  type Outcome,
  type PhaseRecord,
  type PhaseRow,
  type Resolution,
  type SessionRow,
  type SessionTotals,
  type SessionWithTotals,
  type Totalled,
} from "./ledger-rows.ts";

/** An exported session's own columns, the folder normalised. */
export function sessionOf(r: ExportedSession): SessionRow {
  const row = Object.fromEntries(SESSION_COLUMNS.map((c) => [c, r[c]])) as SessionRow;
  return { ...row, cwd: resolve(r.cwd) };
}

const whole = (name: string, value: number | null): number | null => {
  if (value !== null && !(Number.isSafeInteger(value) && value >= 0))
    throw new LedgerError(`${name} must be a whole number of at least 0, got ${value}`);
  return value;
};

/**
 * A finish as stored; a count that is not a whole number is refused (on every
 * engine alike), and its strings pass the redactor, whoever finished the phase.
 */
export function outcomeOf(input: FinishPhaseInput, endedAt: string): Outcome {
  const t = input.tokens;
  const details = input.details
    ? Object.fromEntries(Object.entries(input.details).map(([k, v]) => [k, typeof v === "string" ? secrets.text(v) : v]))
    : null;
  return {
    ended_at: endedAt,
    status: input.status,
    ok: input.ok ? 1 : 0,
    tokens_in: whole("tokens_in", t?.input ?? null),
    tokens_out: whole("tokens_out", t?.output ?? null),
    tokens_cache_read: whole("tokens_cache_read", t?.cache_read ?? null),
    tokens_cache_write: whole("tokens_cache_write", t?.cache_write ?? null),
    cost_micro_usd: whole("cost_micro_usd", input.costMicroUsd),
    seconds: input.seconds,
    stop_reason: input.stopReason === null ? null : secrets.text(input.stopReason),
    failure: input.failure === null ? null : secrets.diagnostic(input.failure),
    details: details ? JSON.stringify(details) : null,
    observed_model: input.observedModel ? secrets.text(input.observedModel) : null,
    resume_after: input.resumeAfter ?? null,
    cost_source: input.costSource ?? null,
    agent_version: input.agentVersion ? secrets.text(input.agentVersion) : null,
    changes: input.changes ? JSON.stringify(input.changes) : null,
    reaped: whole("reaped", input.reaped ?? null),
  };
}

/** An exported phase as stored, without its local id. */
export function phaseRecordOf(sessionId: string, p: ExportedPhase): Omit<PhaseRecord, "id"> {
  const row = Object.fromEntries(PHASE_COLUMNS.map((c) => [c, p[c]])) as unknown as Omit<PhaseRecord, "id" | "session_id">;
  return {
    ...row,
    session_id: sessionId,
    ok: p.ok === null ? null : p.ok ? 1 : 0,
    details: p.details === null ? null : JSON.stringify(p.details),
    changes: p.changes === null ? null : JSON.stringify(p.changes),
  };
}

/** A number a server may hand back as a string (64-bit counts and sums). */
export function num<T extends number | null>(value: T | string | bigint): T {
  return (typeof value === "string" || typeof value === "bigint" ? Number(value) : value) as T;
}

/** A JSON column: facts, not state, so an unreadable entry is just missing. */
function parsed(text: string | null): never | null {
  try {
    return text === null ? null : JSON.parse(text);
  } catch {
    return null;
  }
}

export function toPhase(record: PhaseRecord): PhaseRow {
  const numbers = Object.fromEntries(
    ["id", "seq", "runner_pid", "agent_pgid", "reaped", ...SUMMED].map((c) => [c, num(record[c as keyof PhaseRecord] as number | null)]),
  );
  return {
    ...record,
    ...numbers,
    ok: record.ok === null ? null : num(record.ok) !== 0,
    details: parsed(record.details),
    changes: parsed(record.changes),
  } as PhaseRow;
}

export function splitTotals(row: Totalled): SessionWithTotals {
  const session = Object.fromEntries(SESSION_COLUMNS.map((c) => [c, row[c]])) as SessionRow;
  const totals: SessionTotals = {
    phase_count: num(row.t_phase_count),
    last_status: row.t_last_status,
    tokens_in: num(row.t_tokens_in),
    tokens_out: num(row.t_tokens_out),
    tokens_cache_read: num(row.t_tokens_cache_read),
    tokens_cache_write: num(row.t_tokens_cache_write),
    cost_micro_usd: num(row.t_cost_micro_usd),
    seconds: num(row.t_seconds),
  };
  return { ...session, totals };
}

export function resolution(rows: SessionRow[]): Resolution {
  const [only] = rows;
  if (only === undefined) return { kind: "unknown" };
  if (rows.length === 1) return { kind: "found", session: only };
  return { kind: "ambiguous", candidates: rows };
}
