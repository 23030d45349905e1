// The statements of the ledger's rules (ledger-sql.ts), made from the column
// lists of ledger-rows.ts, and the driver seam every engine implements
// (ledger-sqlite.ts, ledger-postgres.ts). `$name` parameters; one whose type
// the statement does not fix is CAST, for PostgreSQL.
import {
  LedgerError,
  PHASE_COLUMNS,
  PHASE_OUTCOME,
  SESSION_COLUMNS,
  SESSION_MERGED,
  SUMMED,
  type PhaseRecord,
  type SessionRow,
} from "./ledger-rows.ts";

export type Value = string | number | null;
export type Params = Record<string, Value>;

/** Run one statement; `$name` placeholders are bound from params (exactly the names the statement uses). */
export interface Statements {
  all<T>(sql: string, params?: Params): Promise<T[]>;
  get<T>(sql: string, params?: Params): Promise<T | null>;
  /** The number of rows changed. */
  run(sql: string, params?: Params): Promise<number>;
}

export interface Driver extends Statements {
  /** Where the ledger lives, fit to print. */
  readonly where: string;
  /** Appended to a SELECT whose rows must stay locked until the transaction ends ("" where a write transaction excludes all others). */
  readonly forUpdate: string;
  /** Run body in one transaction, retried whole when the engine says it may be (`retry`: an earlier attempt may have committed). */
  transaction<T>(body: (tx: Statements, retry: boolean) => Promise<T>): Promise<T>;
  integrityCheck(): Promise<string>;
  schemaVersion(): Promise<number>;
  close(): Promise<void>;
}

export const list = (names: readonly string[], prefix = ""): string => names.map((c) => `${prefix}${c}`).join(", ");
export const assign = (names: readonly string[]): string => names.map((c) => `${c} = $${c}`).join(", ");
export const pick = <T extends object>(row: T, names: readonly (keyof T)[]): Params =>
  Object.fromEntries(names.map((c) => [c, row[c]])) as Params;

export const PHASE_FIELDS = ["id", "session_id", ...PHASE_COLUMNS];
export const SELECT_SESSION = `SELECT ${list(SESSION_COLUMNS)} FROM sessions`;
export const SELECT_PHASE = `SELECT ${list(PHASE_FIELDS)} FROM phases`;
export const INSERT_SESSION = `INSERT INTO sessions (${list(SESSION_COLUMNS)}) VALUES (${list(SESSION_COLUMNS, "$")})`;
export const MERGE_SESSION = `UPDATE sessions SET ${SESSION_MERGED.map((c) => `${c} = coalesce(${c}, $${c})`).join(", ")} WHERE id = $id`;
export const INSERT_PHASE = `INSERT INTO phases (session_id, ${list(PHASE_COLUMNS)}) VALUES ($session_id, ${list(PHASE_COLUMNS, "$")}) RETURNING ${list(PHASE_FIELDS)}`;
/** A declaration in one statement: nothing changes when the id is taken (then the caller looks why). */
export const DECLARE_SESSION = `${INSERT_SESSION} ON CONFLICT (id) DO NOTHING`;
/** A finish in one statement: only a phase still running takes it. */
export const FINISH_OPEN = `UPDATE phases SET ${assign(PHASE_OUTCOME)} WHERE id = $id AND ended_at IS NULL RETURNING ${list(PHASE_FIELDS)}`;
export const FINISH_BY_SEQ = `UPDATE phases SET ${assign(PHASE_OUTCOME)} WHERE session_id = $session_id AND seq = $seq`;
export const NEWEST_FIRST = "ORDER BY declared_at DESC, rowid DESC";

/**
 * SUM over finished phases, NULL when none finished or any finished one lacks
 * the column. Summed as doubles: an integer sum fails on overflow ("integer
 * overflow") and an imported ledger may hold 2^53 tokens per phase. A value
 * past 1e300 (stored before imports were bounded) counts as 1e300, so a
 * PostgreSQL sum never overflows (22003).
 */
function finishedSum(column: string): string {
  const value = `CAST(p.${column} AS DOUBLE PRECISION)`;
  const finished = `CASE WHEN p.ended_at IS NULL THEN NULL WHEN ${value} > 1e300 THEN 1e300 ELSE ${value} END`;
  return `CASE WHEN count(p.ended_at) > 0 AND count(p.ended_at) = count(${finished}) THEN sum(${finished}) END AS t_${column}`;
}

// Sessions are picked (filtered, ordered, limited) before the join, so a short
// listing does not aggregate every phase in the ledger.
export function listSql(limit: number | null): string {
  const columns = list(SESSION_COLUMNS, "s.");
  return `
  SELECT ${columns},
    count(p.id) AS t_phase_count,
    (SELECT l.status FROM phases l WHERE l.session_id = s.id ORDER BY l.seq DESC LIMIT 1) AS t_last_status,
    ${SUMMED.map(finishedSum).join(",\n    ")}
  FROM (
    SELECT rowid AS _rowid, ${list(SESSION_COLUMNS)} FROM sessions
    WHERE (CAST($id AS TEXT) IS NULL OR id = $id) AND (CAST($agent AS TEXT) IS NULL OR agent = $agent) AND (CAST($cwd AS TEXT) IS NULL OR cwd = $cwd)
      AND (CAST($host AS TEXT) IS NULL OR host = $host OR machine_id LIKE $machine_prefix ESCAPE '\\')
    ${NEWEST_FIRST}
    ${limit === null ? "" : `LIMIT ${Math.trunc(limit)}`}
  ) AS s
  LEFT JOIN phases p ON p.session_id = s.id
  GROUP BY s._rowid, ${columns}
  ORDER BY s.declared_at DESC, s._rowid DESC`;
}

export const now = (): string => new Date().toISOString();

export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export function getSession(db: Statements, id: string, lock = ""): Promise<SessionRow | null> {
  return db.get<SessionRow>(`${SELECT_SESSION} WHERE id = $id${lock}`, { id });
}

export async function mustGetSession(db: Statements, id: string, lock = ""): Promise<SessionRow> {
  const session = await getSession(db, id, lock);
  if (!session) throw new LedgerError(`no session ${id} in the ledger`);
  return session;
}

export function getPhaseRecord(db: Statements, phaseId: number, lock = ""): Promise<PhaseRecord | null> {
  return db.get<PhaseRecord>(`${SELECT_PHASE} WHERE id = $id${lock}`, { id: phaseId });
}
