// The ledger's rules, written once in the SQL both engines speak
// (ledger-statements.ts), over a driver that runs statements and transactions
// (ledger-sqlite.ts, ledger-postgres.ts). Every write is one transaction, and
// one that a driver retries after a lost connection finds its own first
// attempt instead of writing twice.
import { randomUUID } from "node:crypto";
import { isAbsolute, resolve } from "node:path";
import { STATUSES } from "../core/verdict.ts";
import { runnerIdentity, type AgentGroup, type RunnerIdentity } from "./proc-identity.ts";
import type { Host } from "./host.ts";
import type { DeclareInput, HostCount, ImportOrigin, Ledger, ListFilter, StartPhaseInput } from "./ledger.ts";
import {
  AGENTS,
  LedgerError,
  MIN_PREFIX,
  PHASE_OUTCOME,
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
import type { ExportedSession } from "./ledger-export.ts";
import { num, outcomeOf, resolution, splitTotals, toPhase } from "./ledger-convert.ts";
import { mergeExport } from "./ledger-import.ts";
import {
  DECLARE_SESSION,
  FINISH_OPEN,
  INSERT_PHASE,
  NEWEST_FIRST,
  SELECT_PHASE,
  SELECT_SESSION,
  escapeLike,
  getPhaseRecord,
  getSession,
  listSql,
  mustGetSession,
  now,
  type Driver,
  type Params,
  type Statements,
} from "./ledger-statements.ts";

export type { Driver, Params, Statements, Value } from "./ledger-statements.ts";

/** Who runs a phase, as its columns. */
const runnerColumns = (runner: RunnerIdentity | null): Params => ({
  runner_pid: runner?.pid ?? null,
  runner_start: runner?.start ?? null,
  runner_host: runner?.host ?? null,
});

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
      imported_at: null,
      title: input.title ?? null,
    };
    await this.write(async (tx, retry) => {
      if ((await tx.run(DECLARE_SESSION, row)) === 1) return;
      const existing = await getSession(tx, row.id);
      if (existing !== null && retry && existing.declared_at === row.declared_at) return; // our own first attempt
      throw new LedgerError(`session ${row.id} is already declared`);
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
        const mine = await tx.get<PhaseRecord>(
          `${SELECT_PHASE} WHERE session_id = $session_id AND started_at = $started_at AND kind = $kind`,
          { session_id: input.sessionId, started_at: startedAt, kind: input.kind },
        );
        if (mine) return toPhase(mine);
      }
      const next = await tx.get<{ seq: number }>(`SELECT coalesce(max(seq), 0) + 1 AS seq FROM phases WHERE session_id = $session_id`, {
        session_id: input.sessionId,
      });
      const open = Object.fromEntries(PHASE_OUTCOME.map((c) => [c, null])) as Params;
      const record = await tx.get<PhaseRecord>(INSERT_PHASE, {
        ...open,
        session_id: input.sessionId,
        seq: num(next?.seq ?? 1),
        run_id: input.runId ?? null,
        name: input.name ?? null,
        kind: input.kind,
        started_at: startedAt,
        ...runnerColumns(input.runner === undefined ? runnerIdentity() : input.runner),
        agent_pgid: null,
        agent_start: null,
        run_dir: input.runDir ?? null,
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
      const finished = await tx.get<PhaseRecord>(FINISH_OPEN, { ...finish, id: phaseId });
      if (finished) return toPhase(finished);
      const current = await getPhaseRecord(tx, phaseId);
      if (!current) throw new LedgerError(`no phase ${phaseId} in the ledger`);
      if (retry && current.ended_at === finish.ended_at) return toPhase(current); // our own first attempt
      throw new LedgerError(`phase ${phaseId} already finished (${current.status})`);
    });
  }

  async setPhaseAgent(phaseId: number, agent: AgentGroup): Promise<void> {
    await this.write((tx) =>
      tx.run(`UPDATE phases SET agent_pgid = $pgid, agent_start = $start WHERE id = $id`, {
        id: phaseId,
        pgid: agent.pgid,
        start: agent.start,
      }),
    );
  }

  async runningPhases(): Promise<PhaseRow[]> {
    const records = await this.db.all<PhaseRecord>(`${SELECT_PHASE} WHERE ended_at IS NULL ORDER BY id`);
    return records.map(toPhase);
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
      {
        id: null,
        agent: filter.agent ?? null,
        cwd: filter.cwd === undefined ? null : resolve(filter.cwd),
        host,
        machine_prefix: host === null ? null : `${escapeLike(host)}%`,
      },
      filter.limit ?? null,
    );
  }

  async sessionWithTotals(id: string): Promise<SessionWithTotals | null> {
    return (await this.totalled({ id, agent: null, cwd: null, host: null, machine_prefix: null }, 1))[0] ?? null;
  }

  async hosts(): Promise<HostCount[]> {
    const rows = await this.db.all<HostCount>(
      `SELECT host, machine_id, count(*) AS sessions FROM sessions GROUP BY host, machine_id ORDER BY host, machine_id`,
    );
    return rows.map((r) => ({ ...r, sessions: num(r.sessions) }));
  }

  async phases(sessionId: string): Promise<PhaseRow[]> {
    const records = await this.db.all<PhaseRecord>(`${SELECT_PHASE} WHERE session_id = $session_id ORDER BY seq`, {
      session_id: sessionId,
    });
    return records.map(toPhase);
  }

  importSessions(
    records: ExportedSession[],
    where: (index: number) => string = (i) => `record ${i + 1}`,
    origin: ImportOrigin = "import",
  ): Promise<ImportCounts> {
    const imported = origin === "import" ? now() : null;
    return this.write((tx) => mergeExport(tx, records, { where, imported, lock: this.db.forUpdate }));
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
