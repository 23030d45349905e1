// The queue on the fleet's PostgreSQL, through Bun's SQL client: one `tasks`
// table (created if absent, under an advisory lock), claims with FOR UPDATE
// SKIP LOCKED, leases kept in the database's clock, and every write of a
// lease holder fenced by (id, attempt, worker): a worker that lost its lease
// changes nothing. Times are the server's (now()), so hosts' clocks never
// decide who holds a task.
import { SQL } from "bun";
import { retried } from "../io/ledger-postgres.ts";
import { afterLapse, type TaskState } from "./rules.ts";

const CREATE_LOCK = 42170029;
/** Pauses after a lost connection (about 7 s in all): a restart, a killed backend. */
const BACKOFF_MS = [50, 200, 500, 1000, 2000, 3500];

/** `attempt`, again after a lost connection; `again` tells the body it is a retry. */
async function retrying<T>(attempt: (again: boolean) => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt(tries > 0);
    } catch (error) {
      const pause = BACKOFF_MS[tries];
      if (pause === undefined || !retried(error)) throw error;
      await Bun.sleep(pause);
    }
  }
}

const DDL = `CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  key TEXT UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'interrupted', 'cancelled')),
  prompt TEXT NOT NULL,
  request JSON NOT NULL,
  repo TEXT NOT NULL,
  ref TEXT,
  attempt INTEGER NOT NULL DEFAULT 0,
  runs INTEGER NOT NULL DEFAULT 0,
  retries INTEGER NOT NULL DEFAULT 0,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  worker TEXT,
  lease_expires_at TIMESTAMPTZ,
  agent_started BOOLEAN NOT NULL DEFAULT false,
  verdict JSON,
  exit_code INTEGER,
  finished_at TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS tasks_queued ON tasks (created_at) WHERE state = 'queued';`;

/** A lease still held (with id, attempt and worker matched). */
const HELD = `state = 'running' AND lease_expires_at > now()`;

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`;
const COLUMNS = `id, key, state, prompt, request::text AS request, repo, ref, attempt, runs, retries, ${iso("created_at")}, worker, ${iso("lease_expires_at")}, agent_started, verdict::text AS verdict, exit_code, ${iso("finished_at")}`;

/** The run flags a task was submitted with, flag-shaped (never environment values). */
export type TaskRequest = Record<string, string | number | boolean>;

export interface Task {
  id: string;
  key: string | null;
  state: TaskState;
  prompt: string;
  request: TaskRequest;
  repo: string;
  ref: string | null;
  /** The fencing token: the number of the latest claim. */
  attempt: number;
  /** How many attempts started an agent. */
  runs: number;
  retries: number;
  created_at: string;
  worker: string | null;
  lease_expires_at: string | null;
  agent_started: boolean;
  verdict: unknown;
  exit_code: number | null;
  finished_at: string | null;
}

type Row = Omit<Task, "request" | "verdict"> & { request: string; verdict: string | null };
const task = (row: Row): Task => ({ ...row, request: JSON.parse(row.request) as TaskRequest, verdict: row.verdict === null ? null : JSON.parse(row.verdict) });

/** What a lease holder names in every write. */
export interface Lease {
  id: string;
  attempt: number;
  worker: string;
}

export interface NewTask {
  prompt: string;
  request: TaskRequest;
  repo: string;
  ref: string | null;
  key: string | null;
  retries: number;
}

export class Queue {
  private constructor(private readonly sql: SQL) {}

  static async open(url: string): Promise<Queue> {
    const sql = new SQL(url, { max: 2, idleTimeout: 30, connectionTimeout: 10, onclose: () => {} });
    try {
      await sql.begin(async (tx) => {
        await tx.unsafe(`SELECT pg_advisory_xact_lock(${CREATE_LOCK})`);
        await tx.unsafe(DDL);
      });
    } catch (error) {
      await sql.close({ timeout: 0 }).catch(() => {});
      throw error;
    }
    return new Queue(sql);
  }

  async close(): Promise<void> {
    await this.sql.close({ timeout: 5 });
  }

  /** Queue a task; with a key already taken, the task that holds it (created: false). */
  submit(t: NewTask): Promise<{ task: Task; created: boolean }> {
    const id = crypto.randomUUID();
    return retrying(async () => {
      const [row] = await this.sql.unsafe<Row[]>(
      `INSERT INTO tasks (id, key, state, prompt, request, repo, ref, retries) VALUES ($1, $2, 'queued', $3, $4::text::json, $5, $6, $7)
       ON CONFLICT (key) DO NOTHING RETURNING ${COLUMNS}`,
      [id, t.key, t.prompt, JSON.stringify(t.request), t.repo, t.ref, t.retries],
      );
      if (row !== undefined) return { task: task(row), created: true };
      // A retry whose first insert landed finds its own row; a taken key, the task that holds it.
      const [held] = await this.sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM tasks WHERE id = $1 OR key = $2`, [id, t.key]);
      return { task: task(held!), created: held!.id === id };
    });
  }

  /** The oldest queued task, now this worker's for one lease; null when none is queued. */
  async claim(worker: string, leaseMs: number): Promise<Task | null> {
    // Not retried: a claim whose answer was lost is this worker's lease that lapses unused (its agent never started: queued again).
    const [row] = await this.sql.unsafe<Row[]>(
      `UPDATE tasks SET state = 'running', attempt = attempt + 1, worker = $1, agent_started = false,
         lease_expires_at = now() + $2 * interval '1 millisecond'
       WHERE id = (SELECT id FROM tasks WHERE state = 'queued' ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1)
       RETURNING ${COLUMNS}`,
      [worker, leaseMs],
    );
    return row === undefined ? null : task(row);
  }

  /** Renew the lease; false when it is no longer this worker's. */
  async renew(lease: Lease, leaseMs: number): Promise<boolean> {
    return this.fenced(`lease_expires_at = now() + $4 * interval '1 millisecond'`, lease, [leaseMs], "", HELD);
  }

  /** The agent is about to start (a lapse from now on is an interruption); false when the lease is lost. */
  async agentStarting(lease: Lease): Promise<boolean> {
    return this.fenced(`agent_started = true, runs = runs + 1`, lease, [], "AND NOT agent_started", `${HELD} AND agent_started`);
  }

  /** The attempt's result, written only while its lease is current; false when refused. */
  async finish(lease: Lease, verdict: unknown, exitCode: number): Promise<boolean> {
    const set = `state = 'done', verdict = $4::text::json, exit_code = $5, finished_at = now(), worker = NULL, lease_expires_at = NULL`;
    return this.fenced(set, lease, [JSON.stringify(verdict), exitCode], "", `state = 'done'`);
  }

  /** Give a claimed task back untouched (its agent never started: a drain). */
  async release(lease: Lease): Promise<boolean> {
    return this.fenced(`state = 'queued', worker = NULL, lease_expires_at = NULL`, lease, [], "AND NOT agent_started", `state = 'queued'`);
  }

  /**
   * A write of the lease holder: only while (id, attempt, worker) holds an
   * unexpired lease. Retried after a lost connection, when the first try may
   * have landed: `landed` tells, for this attempt's row (no one else writes a
   * row under our attempt number), whether it did.
   */
  private fenced(set: string, lease: Lease, extra: unknown[], also: string, landed: string): Promise<boolean> {
    return retrying(async (again) => {
      const done = await this.sql.unsafe(`UPDATE tasks SET ${set} WHERE id = $1 AND attempt = $2 AND worker = $3 AND ${HELD} ${also}`, [lease.id, lease.attempt, lease.worker, ...extra]);
      if (done.affectedRows === 1 || !again) return done.affectedRows === 1;
      const found = await this.sql.unsafe(`SELECT 1 FROM tasks WHERE id = $1 AND attempt = $2 AND (worker = $3 OR worker IS NULL) AND ${landed}`, [lease.id, lease.attempt, lease.worker]);
      return found.length === 1;
    });
  }

  /** Settle every expired lease (afterLapse); how many. Any worker and any reader may do it: rows another settles are skipped. */
  settleExpired(): Promise<number> {
    return retrying(() => this.settle());
  }

  private settle(): Promise<number> {
    return this.sql.begin(async (tx) => {
      const lapsed = await tx.unsafe<{ id: string; agent_started: boolean; runs: number; retries: number }[]>(
        `SELECT id, agent_started, runs, retries FROM tasks WHERE state = 'running' AND lease_expires_at <= now() FOR UPDATE SKIP LOCKED`,
      );
      for (const l of lapsed) {
        const next = afterLapse({ agentStarted: l.agent_started, runs: l.runs, retries: l.retries });
        const ended = next === "interrupted" ? `, exit_code = 130, finished_at = now()` : "";
        await tx.unsafe(`UPDATE tasks SET state = $2, worker = NULL, lease_expires_at = NULL, agent_started = false${ended} WHERE id = $1`, [l.id, next]);
      }
      return lapsed.length;
    });
  }

  get(id: string): Promise<Task | null> {
    return retrying(async () => {
      const [row] = await this.sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM tasks WHERE id = $1`, [id]);
      return row === undefined ? null : task(row);
    });
  }

  list(): Promise<Task[]> {
    return retrying(async () => (await this.sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM tasks ORDER BY created_at, id`)).map(task));
  }
}
