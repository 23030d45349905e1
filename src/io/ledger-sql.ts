// The ledger's rules, written once in the SQL both engines speak, over a
// driver that runs statements and transactions (ledger-sqlite.ts,
// ledger-postgres.ts). Statements name their parameters `$name` (a parameter
// whose type the statement does not fix is CAST, for PostgreSQL); every write
// is one transaction, and one that a driver retries after a lost connection
// finds its own first attempt instead of writing twice.
import { randomUUID } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { STATUSES } from "../core/verdict.ts";
import type { Host } from "./host.ts";
import type { DeclareInput, HostCount, Ledger, ListFilter, StartPhaseInput, TrustedConfig } from "./ledger.ts";
import { TRUST_VERSION } from "./ledger-schema.ts";
import {
  AGENTS,
  LedgerError,
  MIN_PREFIX,
  PHASE_COLUMNS,
  PHASE_OUTCOME,
  SESSION_COLUMNS,
  SESSION_MERGED,
  SUMMED,
  outcomeOf,
  phaseRecordOf,
  resolution,
  sessionOf,
  splitTotals,
  toPhase,
  num,
  type ExportedSession,
  type FinishPhaseInput,
  type ImportCounts,
  type Outcome,
  type PhaseRecord,
  type PhaseRow,
  type ProbeRow,
  type Resolution,
  type SessionRow,
  type SessionWithTotals,
  type Totalled,
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

const list = (names: readonly string[], prefix = ""): string => names.map((c) => `${prefix}${c}`).join(", ");
const assign = (names: readonly string[]): string => names.map((c) => `${c} = $${c}`).join(", ");
const pick = <T extends object>(row: T, names: readonly (keyof T)[]): Params => Object.fromEntries(names.map((c) => [c, row[c]])) as Params;

const PHASE_FIELDS = ["id", "session_id", ...PHASE_COLUMNS];
const SELECT_SESSION = `SELECT ${list(SESSION_COLUMNS)} FROM sessions`;
const SELECT_PHASE = `SELECT ${list(PHASE_FIELDS)} FROM phases`;
const INSERT_SESSION = `INSERT INTO sessions (${list(SESSION_COLUMNS)}) VALUES (${list(SESSION_COLUMNS, "$")})`;
const MERGE_SESSION = `UPDATE sessions SET ${SESSION_MERGED.map((c) => `${c} = coalesce(${c}, $${c})`).join(", ")} WHERE id = $id`;
const INSERT_PHASE = `INSERT INTO phases (session_id, ${list(PHASE_COLUMNS)}) VALUES ($session_id, ${list(PHASE_COLUMNS, "$")}) RETURNING ${list(PHASE_FIELDS)}`;
const FINISH_BY_ID = `UPDATE phases SET ${assign(PHASE_OUTCOME)} WHERE id = $id`;
const FINISH_BY_SEQ = `UPDATE phases SET ${assign(PHASE_OUTCOME)} WHERE session_id = $session_id AND seq = $seq`;
const NEWEST_FIRST = "ORDER BY declared_at DESC, rowid DESC";

/**
 * SUM over finished phases, NULL when none finished or any finished one lacks
 * the column. Summed as doubles: an integer sum fails on overflow ("integer
 * overflow") and an imported ledger may hold 2^53 tokens per phase.
 */
function finishedSum(column: string): string {
  const finished = `CASE WHEN p.ended_at IS NOT NULL THEN CAST(p.${column} AS DOUBLE PRECISION) END`;
  return `CASE WHEN count(p.ended_at) > 0 AND count(p.ended_at) = count(${finished}) THEN sum(${finished}) END AS t_${column}`;
}

// Sessions are picked (filtered, ordered, limited) before the join, so a short
// listing does not aggregate every phase in the ledger.
function listSql(limit: number | null): string {
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

const now = (): string => new Date().toISOString();

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

export class SqlLedger implements Ledger {
  private closed = false;
  private here: Host | null = null;

  /** `host` is asked for on the first declaration only: reading commands write nothing. */
  constructor(
    private readonly db: Driver,
    private readonly host: () => Host,
  ) {}

  thisHost(): Host {
    this.here ??= this.host();
    return this.here;
  }

  get path(): string {
    return this.db.where;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async declareSession(input: DeclareInput): Promise<SessionRow> {
    if (!AGENTS.includes(input.agent)) throw new LedgerError(`unknown agent ${JSON.stringify(input.agent)}`);
    if (!isAbsolute(input.cwd)) throw new LedgerError(`a session's folder must be absolute, got ${JSON.stringify(input.cwd)}`);
    const env = input.env ?? process.env;
    const here = this.thisHost();
    const row: SessionRow = {
      id: input.id ?? randomUUID(),
      agent: input.agent,
      cwd: resolve(input.cwd), // normalised, so a trailing slash does not make a resume look foreign
      model: input.model ?? null,
      agent_session_id: input.agentSessionId ?? null,
      session_file: input.sessionFile ?? null,
      session_dir: input.sessionDir ?? null,
      parent_id: input.parentId ?? null,
      phase: env.AGENTPORT_PHASE || null,
      run_id: env.AGENTPORT_RUN_ID || null,
      profile: input.profile ?? null,
      declared_at: now(),
      host: here.hostname,
      machine_id: here.machineId,
      request: input.request ?? null,
    };
    await this.write(async (tx, retry) => {
      const existing = await getSession(tx, row.id);
      if (existing !== null && retry && existing.declared_at === row.declared_at) return; // our own first attempt
      if (existing !== null) throw new LedgerError(`session ${row.id} is already declared`);
      await tx.run(INSERT_SESSION, row);
    });
    return row;
  }

  bindAgentSession(id: string, agentSessionId: string, sessionFile?: string | null): Promise<SessionRow> {
    return this.write(async (tx) => {
      const changed = await tx.run(
        `UPDATE sessions SET agent_session_id = $agentSessionId, session_file = coalesce($sessionFile, session_file) WHERE id = $id`,
        { id, agentSessionId, sessionFile: sessionFile ?? null },
      );
      if (changed === 0) throw new LedgerError(`no session ${id} in the ledger`);
      return mustGetSession(tx, id);
    });
  }

  startPhase(input: StartPhaseInput): Promise<PhaseRow> {
    const startedAt = now();
    return this.write(async (tx, retry) => {
      await mustGetSession(tx, input.sessionId, this.db.forUpdate); // and, where the engine needs it, lock its phases' numbering
      if (retry) {
        const mine = await tx.get<PhaseRecord>(`${SELECT_PHASE} WHERE session_id = $session_id AND started_at = $started_at AND kind = $kind`, { session_id: input.sessionId, started_at: startedAt, kind: input.kind });
        if (mine) return toPhase(mine);
      }
      const next = await tx.get<{ seq: number }>(`SELECT coalesce(max(seq), 0) + 1 AS seq FROM phases WHERE session_id = $session_id`, { session_id: input.sessionId });
      const open = Object.fromEntries(PHASE_OUTCOME.map((c) => [c, null])) as Params;
      const record = await tx.get<PhaseRecord>(INSERT_PHASE, {
        ...open,
        session_id: input.sessionId,
        seq: num(next?.seq ?? 1),
        run_id: input.runId ?? null,
        name: input.name ?? null,
        kind: input.kind,
        started_at: startedAt,
      });
      if (!record) throw new LedgerError(`phase of session ${input.sessionId} was not recorded`);
      return toPhase(record);
    });
  }

  finishPhase(phaseId: number, outcome: FinishPhaseInput): Promise<PhaseRow> {
    if (!STATUSES.includes(outcome.status)) return Promise.reject(new LedgerError(`unknown status ${JSON.stringify(outcome.status)}`));
    let finish: Outcome;
    try {
      finish = outcomeOf(outcome, now());
    } catch (error) {
      return Promise.reject(error);
    }
    return this.write(async (tx, retry) => {
      const current = await getPhaseRecord(tx, phaseId, this.db.forUpdate);
      if (!current) throw new LedgerError(`no phase ${phaseId} in the ledger`);
      if (current.ended_at !== null && retry && current.ended_at === finish.ended_at) return toPhase(current); // our own first attempt
      if (current.ended_at !== null) throw new LedgerError(`phase ${phaseId} already finished (${current.status})`);
      await tx.run(FINISH_BY_ID, { ...finish, id: phaseId });
      const record = await getPhaseRecord(tx, phaseId);
      if (!record) throw new LedgerError(`no phase ${phaseId} in the ledger`);
      return toPhase(record);
    });
  }

  getSession(id: string): Promise<SessionRow | null> {
    return getSession(this.db, id);
  }

  async getPhase(phaseId: number): Promise<PhaseRow | null> {
    const record = await getPhaseRecord(this.db, phaseId);
    return record ? toPhase(record) : null;
  }

  async resolveSession(idOrPrefix: string): Promise<Resolution> {
    const byId = await this.getSession(idOrPrefix);
    if (byId) return { kind: "found", session: byId };
    const exact = await this.db.all<SessionRow>(`${SELECT_SESSION} WHERE agent_session_id = $id ${NEWEST_FIRST}`, { id: idOrPrefix });
    if (exact.length > 0) return resolution(exact);
    if (idOrPrefix.length < MIN_PREFIX) return { kind: "unknown" };
    // lower() on both sides: LIKE is case-insensitive in one engine and not in the other.
    const matches = await this.db.all<SessionRow>(
      `${SELECT_SESSION} WHERE lower(id) LIKE lower(CAST($pattern AS TEXT)) ESCAPE '\\' OR lower(agent_session_id) LIKE lower(CAST($pattern AS TEXT)) ESCAPE '\\' ${NEWEST_FIRST}`,
      { pattern: `${escapeLike(idOrPrefix)}%` },
    );
    return resolution(matches);
  }

  listSessions(filter: ListFilter = {}): Promise<SessionWithTotals[]> {
    const host = filter.host ?? null;
    return this.totalled(
      { id: null, agent: filter.agent ?? null, cwd: filter.cwd === undefined ? null : resolve(filter.cwd), host, machine_prefix: host === null ? null : `${escapeLike(host)}%` },
      filter.limit ?? null,
    );
  }

  async sessionWithTotals(id: string): Promise<SessionWithTotals | null> {
    return (await this.totalled({ id, agent: null, cwd: null, host: null, machine_prefix: null }, 1))[0] ?? null;
  }

  async hosts(): Promise<HostCount[]> {
    const rows = await this.db.all<HostCount>(`SELECT host, machine_id, count(*) AS sessions FROM sessions GROUP BY host, machine_id ORDER BY host, machine_id`);
    return rows.map((r) => ({ ...r, sessions: num(r.sessions) }));
  }

  async phases(sessionId: string): Promise<PhaseRow[]> {
    const records = await this.db.all<PhaseRecord>(`${SELECT_PHASE} WHERE session_id = $session_id ORDER BY seq`, { session_id: sessionId });
    return records.map(toPhase);
  }

  importSessions(records: ExportedSession[], where: (index: number) => string = (i) => `record ${i + 1}`): Promise<ImportCounts> {
    // Oldest first, so the new rows keep the export's order (newest first, on ties the first line).
    const order = records.map((_, i) => i).sort((a, b) => (records[a]!.declared_at < records[b]!.declared_at ? -1 : records[a]!.declared_at > records[b]!.declared_at ? 1 : b - a));
    return this.write(async (tx) => {
      const counts: ImportCounts = { sessions_added: 0, sessions_merged: 0, phases_added: 0, phases_finished: 0, phases_unchanged: 0 };
      for (const i of order) {
        const r = records[i]!;
        const fail = (why: string): never => {
          throw new LedgerError(`${where(i)}: session ${r.id}: ${why}`);
        };
        const row = sessionOf(r);
        const existing = await getSession(tx, r.id, this.db.forUpdate);
        if (existing === null) {
          await tx.run(INSERT_SESSION, row);
          counts.sessions_added++;
        } else {
          if (existing.agent !== row.agent) fail(`it is a ${existing.agent} session in this ledger, ${row.agent} in the import`);
          if (existing.cwd !== row.cwd) fail(`it was born in ${existing.cwd} in this ledger, ${row.cwd} in the import`);
          if (existing.machine_id !== null && row.machine_id !== null && existing.machine_id !== row.machine_id) {
            fail(`it was born on machine ${existing.machine_id} in this ledger, ${row.machine_id} in the import`);
          }
          await tx.run(MERGE_SESSION, pick(row, ["id", ...SESSION_MERGED]));
          counts.sessions_merged++;
        }
        for (const p of [...r.phases].sort((a, b) => a.seq - b.seq)) {
          const record = phaseRecordOf(r.id, p);
          const here = await tx.get<{ started_at: string; ended_at: string | null }>(
            `SELECT started_at, ended_at FROM phases WHERE session_id = $session_id AND seq = $seq`,
            { session_id: r.id, seq: p.seq },
          );
          if (here === null) {
            await tx.get(INSERT_PHASE, pick(record, ["session_id", ...PHASE_COLUMNS]));
            counts.phases_added++;
          } else if (here.started_at !== p.started_at) {
            fail(`phase ${p.seq} started at ${here.started_at} in this ledger, at ${p.started_at} in the import: two different histories`);
          } else if (here.ended_at === null && p.ended_at !== null) {
            await tx.run(FINISH_BY_SEQ, { ...pick(record as Outcome, PHASE_OUTCOME), session_id: r.id, seq: p.seq });
            counts.phases_finished++;
          } else {
            counts.phases_unchanged++;
          }
        }
      }
      return counts;
    });
  }

  async getProbe(path: string, size: number, mtimeMs: number): Promise<ProbeRow | null> {
    const row = await this.db.get<ProbeRow & { data: string }>(
      `SELECT path, size, mtime_ms, data, probed_at FROM probes WHERE path = $path AND size = $size AND mtime_ms = $mtime_ms`,
      { path, size, mtime_ms: Math.floor(mtimeMs) },
    );
    if (!row) return null;
    try {
      return { ...row, size: num(row.size), mtime_ms: num(row.mtime_ms), data: JSON.parse(row.data) };
    } catch {
      return null; // a cache: an unreadable entry is a miss
    }
  }

  async putProbe(path: string, size: number, mtimeMs: number, data: unknown): Promise<void> {
    const json = JSON.stringify(data) ?? "null";
    await this.write(async (tx) => {
      await tx.run(`DELETE FROM probes WHERE path = $path`, { path });
      await tx.run(`INSERT INTO probes (path, size, mtime_ms, data, probed_at) VALUES ($path, $size, $mtime_ms, $data, $probed_at)`, {
        path,
        size,
        mtime_ms: Math.floor(mtimeMs),
        data: json,
        probed_at: now(),
      });
    });
  }

  async trustedConfig(path: string): Promise<TrustedConfig | null> {
    if ((await this.db.schemaVersion()) < TRUST_VERSION) return null;
    return this.db.get<TrustedConfig>(`SELECT path, sha256, trusted_at FROM trusted_configs WHERE path = $path`, { path });
  }

  async trustConfig(path: string, sha256: string): Promise<void> {
    if (!isAbsolute(path)) throw new LedgerError(`a trusted config's path must be absolute, got ${JSON.stringify(path)}`);
    await this.write((tx) =>
      tx.run(
        `INSERT INTO trusted_configs (path, sha256, trusted_at) VALUES ($path, $sha256, $at)
         ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, trusted_at = excluded.trusted_at`,
        { path, sha256, at: now() },
      ),
    );
  }

  integrityCheck(): Promise<string> {
    return this.db.integrityCheck();
  }

  schemaVersion(): Promise<number> {
    return this.db.schemaVersion();
  }

  private async totalled(params: Params, limit: number | null): Promise<SessionWithTotals[]> {
    const rows = await this.db.all<Totalled>(listSql(limit), params);
    return rows.map(splitTotals);
  }

  private write<T>(body: (tx: Statements, retry: boolean) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new LedgerError(`the ledger ${this.path} is closed`));
    return this.db.transaction(body);
  }
}

function getSession(db: Statements, id: string, lock = ""): Promise<SessionRow | null> {
  return db.get<SessionRow>(`${SELECT_SESSION} WHERE id = $id${lock}`, { id });
}

async function mustGetSession(db: Statements, id: string, lock = ""): Promise<SessionRow> {
  const session = await getSession(db, id, lock);
  if (!session) throw new LedgerError(`no session ${id} in the ledger`);
  return session;
}

function getPhaseRecord(db: Statements, phaseId: number, lock = ""): Promise<PhaseRecord | null> {
  return db.get<PhaseRecord>(`${SELECT_PHASE} WHERE id = $id${lock}`, { id: phaseId });
}
