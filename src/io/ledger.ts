// The ledger: an embedded SQLite file that outlives every run.
// A session is declared (a committed transaction) before its agent process is
// spawned, so a runner killed with SIGKILL mid-phase still leaves its row, and a
// resume from another folder than the session's birth folder can be refused.
import { Database, SQLiteError } from "bun:sqlite";
import { randomUUID } from "node:crypto";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { STATUSES, type Status, type Tokens, type Verdict } from "../core/verdict.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./ledger-schema.ts";
import { z } from "zod";

export { SCHEMA_VERSION } from "./ledger-schema.ts";

export type AgentName = Verdict["agent"];
const AGENTS: readonly AgentName[] = ["claude", "pi"];

/** Ids and agent session ids shorter than this only resolve when typed in full. */
export const MIN_PREFIX = 4;
const BUSY_TIMEOUT_MS = 10_000;
const BUSY_RETRIES = 3;

/** A ledger problem worth a plain message: bad input, an unknown row, an unusable file. */
export class LedgerError extends Error {
  override readonly name = "LedgerError";
}

// A type, not an interface: it binds as a named-parameter record.
export type SessionRow = {
  id: string;
  agent: AgentName;
  cwd: string;
  model: string | null;
  agent_session_id: string | null;
  session_file: string | null;
  session_dir: string | null;
  parent_id: string | null;
  phase: string | null;
  run_id: string | null;
  profile: string | null;
  declared_at: string;
};

export interface PhaseRow {
  id: number;
  session_id: string;
  seq: number;
  run_id: string | null;
  name: string | null;
  kind: string | null;
  started_at: string;
  ended_at: string | null;
  status: Status | null;
  ok: boolean | null;
  tokens_in: number | null;
  tokens_out: number | null;
  tokens_cache_read: number | null;
  tokens_cache_write: number | null;
  cost_micro_usd: number | null;
  seconds: number | null;
  stop_reason: string | null;
  failure: string | null;
  /** Supervision and fault facts: flat scalars. */
  details: Record<string, string | number | boolean> | null;
}

/** Over a session's phases. A sum covers the finished phases, and is null if any of them lacks the value (or none finished). */
export interface SessionTotals {
  phase_count: number;
  /** The status of the highest-seq phase: null if it has not finished (or there is none). */
  last_status: Status | null;
  tokens_in: number | null;
  tokens_out: number | null;
  tokens_cache_read: number | null;
  tokens_cache_write: number | null;
  cost_micro_usd: number | null;
  seconds: number | null;
}

export type SessionWithTotals = SessionRow & { totals: SessionTotals };

export type Resolution =
  | { kind: "found"; session: SessionRow }
  | { kind: "ambiguous"; candidates: SessionRow[] }
  | { kind: "unknown" };

export interface DeclareInput {
  id?: string;
  agent: AgentName;
  cwd: string;
  model?: string | null;
  agentSessionId?: string | null;
  sessionFile?: string | null;
  sessionDir?: string | null;
  parentId?: string | null;
  profile?: string | null;
  /** Where AGENTPORT_PHASE and AGENTPORT_RUN_ID are read; process.env by default. */
  env?: Record<string, string | undefined>;
}

export interface StartPhaseInput {
  sessionId: string;
  kind: string;
  name?: string | null;
  runId?: string | null;
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
}

export interface ProbeRow {
  path: string;
  size: number;
  mtime_ms: number;
  data: unknown;
  probed_at: string;
}

// The export format (`agentport sessions --json`): one session per line, its
// columns, derived totals, and its phases with every column. `import` reads it
// back; a phase's `id` is local to the ledger that wrote it and is not kept
// (a phase is known by session and seq).
const text = z.string().nullable();
const count = z.number().int().nonnegative().nullable();
export const ExportedPhaseSchema = z.strictObject({
  id: z.number().int().optional(),
  session_id: z.string().optional(),
  seq: z.number().int().positive(),
  run_id: text,
  name: text,
  kind: text,
  started_at: z.string().min(1),
  ended_at: text,
  status: z.enum(STATUSES).nullable(),
  ok: z.boolean().nullable(),
  tokens_in: count,
  tokens_out: count,
  tokens_cache_read: count,
  tokens_cache_write: count,
  cost_micro_usd: count,
  seconds: z.number().nonnegative().nullable(),
  stop_reason: text,
  failure: text,
  details: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable(),
});
export type ExportedPhase = z.infer<typeof ExportedPhaseSchema>;

export const ExportedSessionSchema = z
  .strictObject({
    id: z.string().min(1),
    agent: z.enum(AGENTS as [AgentName, ...AgentName[]]),
    cwd: z.string().refine((p) => isAbsolute(p), "an absolute path"),
    model: text,
    agent_session_id: text,
    session_file: text,
    session_dir: text,
    parent_id: text,
    phase: text,
    run_id: text,
    profile: text,
    declared_at: z.string().min(1),
    /** Derived from the phases: recomputed, never imported. */
    totals: z.unknown().optional(),
    phases: z.array(ExportedPhaseSchema).default([]),
  })
  .superRefine((s, ctx) => {
    const seen = new Set<number>();
    s.phases.forEach((p, i) => {
      if (p.session_id !== undefined && p.session_id !== s.id) ctx.addIssue({ code: "custom", path: ["phases", i, "session_id"], message: `is not the session's id ${s.id}` });
      if (seen.has(p.seq)) ctx.addIssue({ code: "custom", path: ["phases", i, "seq"], message: `seq ${p.seq} appears twice` });
      seen.add(p.seq);
    });
  });
export type ExportedSession = z.infer<typeof ExportedSessionSchema>;

export interface ImportCounts {
  sessions_added: number;
  /** Already in the ledger: empty columns filled, nothing overwritten. */
  sessions_merged: number;
  phases_added: number;
  /** Running here, finished in the import: the finish was taken. */
  phases_finished: number;
  phases_unchanged: number;
}

export function ledgerPath(home: string): string {
  return join(home, "ledger.sqlite");
}

type PhaseRecord = Omit<PhaseRow, "ok" | "details"> & { ok: number | null; details: string | null };
type Totalled = SessionRow & { [K in keyof SessionTotals as `t_${K}`]: SessionTotals[K] };

const SUMMED = ["tokens_in", "tokens_out", "tokens_cache_read", "tokens_cache_write", "cost_micro_usd", "seconds"] as const;

/**
 * The sum over finished phases, NULL when none finished or any finished one
 * lacks the column. total(), not sum(): sum() of integers fails on overflow
 * ("integer overflow") and an imported ledger can hold 2^53 per phase.
 */
function finishedSum(column: string): string {
  const finished = `CASE WHEN p.ended_at IS NOT NULL THEN p.${column} END`;
  return `CASE WHEN count(p.ended_at) > 0 AND count(p.ended_at) = count(${finished}) THEN total(${finished}) END AS t_${column}`;
}

// Sessions are picked (filtered, ordered, limited) before the join, so a short
// listing does not aggregate every phase in the file.
const LIST_SQL = `
  SELECT s.*,
    count(p.id) AS t_phase_count,
    (SELECT l.status FROM phases l WHERE l.session_id = s.id ORDER BY l.seq DESC LIMIT 1) AS t_last_status,
    ${SUMMED.map(finishedSum).join(",\n    ")}
  FROM (
    SELECT rowid AS _rowid, * FROM sessions
    WHERE ($id IS NULL OR id = $id) AND ($agent IS NULL OR agent = $agent) AND ($cwd IS NULL OR cwd = $cwd)
    ORDER BY declared_at DESC, rowid DESC
    LIMIT $limit
  ) AS s
  LEFT JOIN phases p ON p.session_id = s.id
  GROUP BY s.id
  ORDER BY s.declared_at DESC, s._rowid DESC`;

export class Ledger implements Disposable {
  private closed = false;

  private constructor(
    private readonly db: Database,
    readonly path: string,
  ) {}

  /** Open (creating, and migrating forward) `home/ledger.sqlite`. */
  static open(home: string): Ledger {
    const dir = resolve(home);
    const path = ledgerPath(dir);
    let db: Database | undefined;
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      // Create the file ourselves so it is private; SQLite gives -wal and -shm the same mode.
      closeSync(openSync(path, "a", 0o600));
      db = new Database(path, { strict: true });
      const opened = db;
      retryBusy(() => {
        configure(opened);
        migrate(opened, path);
      });
      return new Ledger(opened, path);
    } catch (error) {
      db?.close();
      throw openError(error, path);
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  [Symbol.dispose](): void {
    this.close();
  }

  declareSession(input: DeclareInput): SessionRow {
    if (!AGENTS.includes(input.agent)) throw new LedgerError(`unknown agent ${JSON.stringify(input.agent)}`);
    if (!isAbsolute(input.cwd)) throw new LedgerError(`a session's folder must be absolute, got ${JSON.stringify(input.cwd)}`);
    const env = input.env ?? process.env;
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
      declared_at: new Date().toISOString(),
    };
    this.write(() => {
      if (this.getSession(row.id)) throw new LedgerError(`session ${row.id} is already declared`);
      this.db
        .query(
          `INSERT INTO sessions (id, agent, cwd, model, agent_session_id, session_file, session_dir, parent_id, phase, run_id, profile, declared_at)
           VALUES ($id, $agent, $cwd, $model, $agent_session_id, $session_file, $session_dir, $parent_id, $phase, $run_id, $profile, $declared_at)`,
        )
        .run(row);
    });
    return row;
  }

  /** Record the agent's own session id (and pi's session file) once it is known. */
  bindAgentSession(id: string, agentSessionId: string, sessionFile?: string | null): SessionRow {
    return this.write(() => {
      const changed = this.db
        .query(
          `UPDATE sessions SET agent_session_id = $agentSessionId, session_file = coalesce($sessionFile, session_file) WHERE id = $id`,
        )
        .run({ id, agentSessionId, sessionFile: sessionFile ?? null }).changes;
      if (changed === 0) throw new LedgerError(`no session ${id} in the ledger`);
      return this.mustGetSession(id);
    });
  }

  startPhase(input: StartPhaseInput): PhaseRow {
    return this.write(() => {
      this.mustGetSession(input.sessionId);
      const record = this.db
        .query<PhaseRecord, [Record<string, string | null>]>(
          `INSERT INTO phases (session_id, seq, run_id, name, kind, started_at)
           SELECT $sessionId, coalesce(max(seq), 0) + 1, $runId, $name, $kind, $startedAt FROM phases WHERE session_id = $sessionId
           RETURNING *`,
        )
        .get({
          sessionId: input.sessionId,
          runId: input.runId ?? null,
          name: input.name ?? null,
          kind: input.kind,
          startedAt: new Date().toISOString(),
        });
      if (!record) throw new LedgerError(`phase of session ${input.sessionId} was not recorded`);
      return toPhase(record);
    });
  }

  /** Record a phase's outcome. A phase finishes once: a second finish is an error, not an overwrite. */
  finishPhase(phaseId: number, outcome: FinishPhaseInput): PhaseRow {
    if (!STATUSES.includes(outcome.status)) throw new LedgerError(`unknown status ${JSON.stringify(outcome.status)}`);
    return this.write(() => {
      const current = this.getPhase(phaseId);
      if (!current) throw new LedgerError(`no phase ${phaseId} in the ledger`);
      if (current.ended_at !== null) throw new LedgerError(`phase ${phaseId} already finished (${current.status})`);
      const t = outcome.tokens;
      this.db
        .query(
          `UPDATE phases SET ended_at = $endedAt, status = $status, ok = $ok,
             tokens_in = $tokensIn, tokens_out = $tokensOut, tokens_cache_read = $cacheRead, tokens_cache_write = $cacheWrite,
             cost_micro_usd = $cost, seconds = $seconds, stop_reason = $stopReason, failure = $failure, details = $details
           WHERE id = $id`,
        )
        .run({
          id: phaseId,
          endedAt: new Date().toISOString(),
          status: outcome.status,
          ok: outcome.ok ? 1 : 0,
          tokensIn: t?.input ?? null,
          tokensOut: t?.output ?? null,
          cacheRead: t?.cache_read ?? null,
          cacheWrite: t?.cache_write ?? null,
          cost: outcome.costMicroUsd,
          seconds: outcome.seconds,
          stopReason: outcome.stopReason,
          failure: outcome.failure,
          details: outcome.details ? JSON.stringify(outcome.details) : null,
        });
      return toPhase(this.mustGetPhaseRecord(phaseId));
    });
  }

  getSession(id: string): SessionRow | null {
    return this.db.query<SessionRow, [string]>(`SELECT * FROM sessions WHERE id = ?`).get(id);
  }

  getPhase(phaseId: number): PhaseRow | null {
    const record = this.db.query<PhaseRecord, [number]>(`SELECT * FROM phases WHERE id = ?`).get(phaseId);
    return record ? toPhase(record) : null;
  }

  /**
   * Find a session by agentport id or agent session id: an exact match first,
   * else a unique prefix of at least MIN_PREFIX characters (ASCII case-insensitive,
   * `%` and `_` literal).
   */
  resolveSession(idOrPrefix: string): Resolution {
    const byId = this.getSession(idOrPrefix);
    if (byId) return { kind: "found", session: byId };
    const exact = this.db
      .query<SessionRow, [string]>(`SELECT * FROM sessions WHERE agent_session_id = ? ORDER BY declared_at DESC, rowid DESC`)
      .all(idOrPrefix);
    if (exact.length > 0) return resolution(exact);
    if (idOrPrefix.length < MIN_PREFIX) return { kind: "unknown" };
    const pattern = `${escapeLike(idOrPrefix)}%`;
    const matches = this.db
      .query<SessionRow, [string, string]>(
        `SELECT * FROM sessions WHERE id LIKE ? ESCAPE '\\' OR agent_session_id LIKE ? ESCAPE '\\'
         ORDER BY declared_at DESC, rowid DESC`,
      )
      .all(pattern, pattern);
    return resolution(matches);
  }

  /** Newest first, each with totals over its phases. */
  listSessions(filter: { agent?: AgentName; cwd?: string; limit?: number } = {}): SessionWithTotals[] {
    return this.totalled({
      id: null,
      agent: filter.agent ?? null,
      cwd: filter.cwd === undefined ? null : resolve(filter.cwd),
      limit: filter.limit ?? -1, // SQLite: a negative LIMIT is no limit
    });
  }

  /** One session with its totals, as listSessions gives them. */
  sessionWithTotals(id: string): SessionWithTotals | null {
    return this.totalled({ id, agent: null, cwd: null, limit: 1 })[0] ?? null;
  }

  phases(sessionId: string): PhaseRow[] {
    return this.db
      .query<PhaseRecord, [string]>(`SELECT * FROM phases WHERE session_id = ? ORDER BY seq`)
      .all(sessionId)
      .map(toPhase);
  }

  /**
   * Merge exported sessions (`sessions --json` lines) in one transaction: a
   * session already here keeps its columns (empty ones are filled) and must
   * have the same agent and birth folder; a phase is matched by session and
   * seq, and one still running here takes the import's finish. Importing the
   * same lines twice changes nothing. `where(i)` names record i in errors.
   */
  importSessions(records: ExportedSession[], where: (index: number) => string = (i) => `record ${i + 1}`): ImportCounts {
    const counts: ImportCounts = { sessions_added: 0, sessions_merged: 0, phases_added: 0, phases_finished: 0, phases_unchanged: 0 };
    // Oldest first, so the new rows keep the export's order (newest first, on ties the first line).
    const order = records.map((_, i) => i).sort((a, b) => (records[a]!.declared_at < records[b]!.declared_at ? -1 : records[a]!.declared_at > records[b]!.declared_at ? 1 : b - a));
    return this.write(() => {
      for (const i of order) {
        const r = records[i]!;
        const fail = (why: string): never => {
          throw new LedgerError(`${where(i)}: session ${r.id}: ${why}`);
        };
        const row: SessionRow = {
          id: r.id,
          agent: r.agent,
          cwd: resolve(r.cwd),
          model: r.model,
          agent_session_id: r.agent_session_id,
          session_file: r.session_file,
          session_dir: r.session_dir,
          parent_id: r.parent_id,
          phase: r.phase,
          run_id: r.run_id,
          profile: r.profile,
          declared_at: r.declared_at,
        };
        const existing = this.getSession(r.id);
        if (existing === null) {
          this.db
            .query(
              `INSERT INTO sessions (id, agent, cwd, model, agent_session_id, session_file, session_dir, parent_id, phase, run_id, profile, declared_at)
               VALUES ($id, $agent, $cwd, $model, $agent_session_id, $session_file, $session_dir, $parent_id, $phase, $run_id, $profile, $declared_at)`,
            )
            .run(row);
          counts.sessions_added++;
        } else {
          if (existing.agent !== row.agent) fail(`it is a ${existing.agent} session in this ledger, ${row.agent} in the import`);
          if (existing.cwd !== row.cwd) fail(`it was born in ${existing.cwd} in this ledger, ${row.cwd} in the import`);
          this.db
            .query(
              `UPDATE sessions SET model = coalesce(model, $model), agent_session_id = coalesce(agent_session_id, $agent_session_id),
                 session_file = coalesce(session_file, $session_file), session_dir = coalesce(session_dir, $session_dir),
                 parent_id = coalesce(parent_id, $parent_id), phase = coalesce(phase, $phase), run_id = coalesce(run_id, $run_id),
                 profile = coalesce(profile, $profile)
               WHERE id = $id`,
            )
            .run({
              id: row.id,
              model: row.model,
              agent_session_id: row.agent_session_id,
              session_file: row.session_file,
              session_dir: row.session_dir,
              parent_id: row.parent_id,
              phase: row.phase,
              run_id: row.run_id,
              profile: row.profile,
            });
          counts.sessions_merged++;
        }
        for (const p of [...r.phases].sort((a, b) => a.seq - b.seq)) {
          const finish = {
            sessionId: r.id,
            seq: p.seq,
            endedAt: p.ended_at,
            status: p.status,
            ok: p.ok === null ? null : p.ok ? 1 : 0,
            tokensIn: p.tokens_in,
            tokensOut: p.tokens_out,
            cacheRead: p.tokens_cache_read,
            cacheWrite: p.tokens_cache_write,
            cost: p.cost_micro_usd,
            seconds: p.seconds,
            stopReason: p.stop_reason,
            failure: p.failure,
            details: p.details === null ? null : JSON.stringify(p.details),
          };
          const values = { ...finish, runId: p.run_id, name: p.name, kind: p.kind, startedAt: p.started_at };
          const here = this.db
            .query<{ id: number; started_at: string; ended_at: string | null }, [string, number]>(`SELECT id, started_at, ended_at FROM phases WHERE session_id = ? AND seq = ?`)
            .get(r.id, p.seq);
          if (here === null) {
            this.db
              .query(
                `INSERT INTO phases (session_id, seq, run_id, name, kind, started_at, ended_at, status, ok, tokens_in, tokens_out,
                   tokens_cache_read, tokens_cache_write, cost_micro_usd, seconds, stop_reason, failure, details)
                 VALUES ($sessionId, $seq, $runId, $name, $kind, $startedAt, $endedAt, $status, $ok, $tokensIn, $tokensOut,
                   $cacheRead, $cacheWrite, $cost, $seconds, $stopReason, $failure, $details)`,
              )
              .run(values);
            counts.phases_added++;
          } else if (here.started_at !== p.started_at) {
            fail(`phase ${p.seq} started at ${here.started_at} in this ledger, at ${p.started_at} in the import: two different histories`);
          } else if (here.ended_at === null && p.ended_at !== null) {
            this.db
              .query(
                `UPDATE phases SET ended_at = $endedAt, status = $status, ok = $ok, tokens_in = $tokensIn, tokens_out = $tokensOut,
                   tokens_cache_read = $cacheRead, tokens_cache_write = $cacheWrite, cost_micro_usd = $cost, seconds = $seconds,
                   stop_reason = $stopReason, failure = $failure, details = $details
                 WHERE session_id = $sessionId AND seq = $seq`,
              )
              .run(finish);
            counts.phases_finished++;
          } else {
            counts.phases_unchanged++;
          }
        }
      }
      return counts;
    });
  }

  /** The cached probe of a file, if its size and mtime are unchanged. */
  getProbe(path: string, size: number, mtimeMs: number): ProbeRow | null {
    const row = this.db
      .query<ProbeRow & { data: string }, [string, number, number]>(
        `SELECT * FROM probes WHERE path = ? AND size = ? AND mtime_ms = ?`,
      )
      .get(path, size, Math.floor(mtimeMs));
    if (!row) return null;
    try {
      return { ...row, data: JSON.parse(row.data) };
    } catch {
      return null; // a cache: an unreadable entry is a miss
    }
  }

  /** Cache a probe; entries for older versions of the same file are dropped. */
  putProbe(path: string, size: number, mtimeMs: number, data: unknown): void {
    const key = { path, size, mtimeMs: Math.floor(mtimeMs) };
    const json = JSON.stringify(data) ?? "null";
    this.write(() => {
      this.db.query(`DELETE FROM probes WHERE path = $path`).run({ path });
      this.db
        .query(`INSERT INTO probes (path, size, mtime_ms, data, probed_at) VALUES ($path, $size, $mtimeMs, $json, $probedAt)`)
        .run({ ...key, json, probedAt: new Date().toISOString() });
    });
  }

  /** "ok", or SQLite's list of problems, one a line. */
  integrityCheck(): string {
    return this.db
      .query<{ integrity_check: string }, []>(`PRAGMA integrity_check`)
      .all()
      .map((r) => r.integrity_check)
      .join("\n");
  }

  /** The file's schema version (PRAGMA user_version). */
  schemaVersion(): number {
    return userVersion(this.db);
  }

  private totalled(params: { id: string | null; agent: string | null; cwd: string | null; limit: number }): SessionWithTotals[] {
    return this.db
      .query<Totalled & { _rowid: number }, [Record<string, string | number | null>]>(LIST_SQL)
      .all(params)
      .map(splitTotals);
  }

  private mustGetSession(id: string): SessionRow {
    const session = this.getSession(id);
    if (!session) throw new LedgerError(`no session ${id} in the ledger`);
    return session;
  }

  private mustGetPhaseRecord(phaseId: number): PhaseRecord {
    const record = this.db.query<PhaseRecord, [number]>(`SELECT * FROM phases WHERE id = ?`).get(phaseId);
    if (!record) throw new LedgerError(`no phase ${phaseId} in the ledger`);
    return record;
  }

  /** One write transaction, BEGIN IMMEDIATE so concurrent writers queue on the busy timeout. */
  private write<T>(body: () => T): T {
    if (this.closed) throw new LedgerError(`the ledger ${this.path} is closed`);
    return retryBusy(() => immediate(this.db, body));
  }
}

function immediate<T>(db: Database, body: () => T): T {
  db.query(`BEGIN IMMEDIATE`).run();
  try {
    const result = body();
    db.query(`COMMIT`).run();
    return result;
  } catch (error) {
    if (db.inTransaction) {
      try {
        db.query(`ROLLBACK`).run();
      } catch {
        // keep the error that made us roll back
      }
    }
    throw error;
  }
}

function isBusy(error: unknown): boolean {
  // The primary code is the low byte of the extended one (SQLITE_BUSY_SNAPSHOT, ...).
  return error instanceof SQLiteError && (error.errno & 0xff) === 5;
}

/** Last resort behind busy_timeout: retry a whole transaction a few times, with jittered backoff. */
function retryBusy<T>(attempt: () => T): T {
  for (let tries = 1; ; tries++) {
    try {
      return attempt();
    } catch (error) {
      if (!isBusy(error) || tries > BUSY_RETRIES) throw error;
      Bun.sleepSync(25 * 2 ** tries + Math.random() * 25);
    }
  }
}

function configure(db: Database): void {
  // busy_timeout first, so even the switch to WAL waits for other openers.
  db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.query(`PRAGMA journal_mode = WAL`).get();
  // In WAL, NORMAL survives a killed process; only an OS crash can lose the last commits.
  db.run(`PRAGMA synchronous = NORMAL`);
  db.run(`PRAGMA foreign_keys = ON`);
}

function userVersion(db: Database): number {
  return db.query<{ user_version: number }, []>(`PRAGMA user_version`).get()?.user_version ?? 0;
}

function refuseNewer(version: number, path: string): void {
  if (version > SCHEMA_VERSION) {
    throw new LedgerError(
      `the ledger ${path} has schema version ${version}, newer than this agentport knows (${SCHEMA_VERSION}): upgrade agentport`,
    );
  }
}

/** Apply pending migrations, each in its own transaction; safe against another process doing the same. */
function migrate(db: Database, path: string): void {
  for (;;) {
    const seen = userVersion(db);
    refuseNewer(seen, path);
    if (seen === SCHEMA_VERSION) return;
    immediate(db, () => {
      const version = userVersion(db); // re-read under the write lock: another opener may have migrated
      refuseNewer(version, path);
      if (version !== seen) return;
      if (version === 0 && hasTables(db)) throw new LedgerError(`${path} is a SQLite database but not an agentport ledger`);
      db.run(MIGRATIONS[version]!);
      db.run(`PRAGMA user_version = ${version + 1}`);
    });
  }
}

function hasTables(db: Database): boolean {
  return db.query(`SELECT 1 FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' LIMIT 1`).get() !== null;
}

function openError(error: unknown, path: string): Error {
  if (error instanceof LedgerError) return error;
  if (error instanceof SQLiteError && (error.errno & 0xff) === 26) {
    return new LedgerError(`${path} is not an agentport ledger: not a SQLite database`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new LedgerError(`cannot open the ledger ${path}: ${message}`, { cause: error });
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}

function resolution(rows: SessionRow[]): Resolution {
  const [only] = rows;
  if (only === undefined) return { kind: "unknown" };
  if (rows.length === 1) return { kind: "found", session: only };
  return { kind: "ambiguous", candidates: rows };
}

function toPhase(record: PhaseRecord): PhaseRow {
  let details: PhaseRow["details"] = null;
  try {
    details = record.details === null ? null : JSON.parse(record.details);
  } catch {
    details = null; // facts, not state: an unreadable entry is just missing
  }
  return { ...record, ok: record.ok === null ? null : record.ok !== 0, details };
}

function splitTotals(row: Totalled & { _rowid: number }): SessionWithTotals {
  const session: SessionRow = {
    id: row.id,
    agent: row.agent,
    cwd: row.cwd,
    model: row.model,
    agent_session_id: row.agent_session_id,
    session_file: row.session_file,
    session_dir: row.session_dir,
    parent_id: row.parent_id,
    phase: row.phase,
    run_id: row.run_id,
    profile: row.profile,
    declared_at: row.declared_at,
  };
  const totals: SessionTotals = {
    phase_count: row.t_phase_count,
    last_status: row.t_last_status,
    tokens_in: row.t_tokens_in,
    tokens_out: row.t_tokens_out,
    tokens_cache_read: row.t_tokens_cache_read,
    tokens_cache_write: row.t_tokens_cache_write,
    cost_micro_usd: row.t_cost_micro_usd,
    seconds: row.t_seconds,
  };
  return { ...session, totals };
}
