// The queue on the fleet's PostgreSQL, through Bun's SQL client: claims with
// FOR UPDATE SKIP LOCKED, leases kept in the database's clock, and every write
// of a lease holder fenced by (id, attempt, worker): a worker that lost its
// lease changes nothing. Times are the server's (now()), so hosts' clocks
// never decide who holds a task.
import { SQL } from "bun";
import {
  COLUMNS,
  createTables,
  insertTask,
  retrying,
  taskOf,
  textArray,
  type GateResult,
  type NewTask,
  type Row,
  type Task,
} from "./db.ts";
import { Groups } from "./groups.ts";
import { afterLapse, type Budget, type Offer, type Period } from "./rules.ts";
import { Roster } from "./roster.ts";

export type { NewTask, Task, TaskRequest } from "./db.ts";

/** A lease still held (with id, attempt and worker matched). */
const HELD = `state = 'running' AND lease_expires_at > now()`;

/** What a lease holder names in every write. */
export interface Lease {
  id: string;
  attempt: number;
  worker: string;
}

/** What a task keeps of its run (the workspace's patch, the stream): its size, and gzipped when it is stored (null past STORED_MAX_BYTES). */
export interface Kept {
  bytes: number;
  gzipped: Uint8Array | null;
}

/** A holder's write: landed (and whether a cancel is asked), or refused (the lease is not this attempt's). */
type Fenced = { cancel: boolean } | null;

/** What `cancel` did: a queued task is cancelled at once, a running one is asked to stop. */
export type CancelOutcome = "cancelled" | "requested" | "final" | "unknown";

export class Queue {
  readonly roster: Roster;
  readonly groups: Groups;
  private constructor(private readonly sql: SQL) {
    this.roster = new Roster(sql);
    this.groups = new Groups(sql);
  }

  static async open(url: string): Promise<Queue> {
    const sql = new SQL(url, { max: 2, idleTimeout: 30, connectionTimeout: 10, onclose: () => {} });
    try {
      await createTables(sql);
    } catch (error) {
      await sql.close({ timeout: 0 }).catch(() => {});
      throw error;
    }
    return new Queue(sql);
  }

  /** The queue when its tables exist, else null (nothing created: a command that only may name a task). */
  static async ifPresent(url: string): Promise<Queue | null> {
    const sql = new SQL(url, { max: 1, idleTimeout: 30, connectionTimeout: 10, onclose: () => {} });
    const [row] = await sql
      .unsafe<{ present: boolean }[]>(`SELECT to_regclass('tasks') IS NOT NULL AS present`)
      .catch(() => [{ present: false }]);
    if (row?.present) return new Queue(sql);
    await sql.close({ timeout: 0 }).catch(() => {});
    return null;
  }

  async close(): Promise<void> {
    await this.sql.close({ timeout: 5 });
  }

  /** Queue a task; with a key already taken, the task that holds it (created: false). */
  submit(t: NewTask): Promise<{ task: Task; created: boolean }> {
    const id = crypto.randomUUID();
    return retrying(async () => {
      const [row] = await this.sql.unsafe<Row[]>(...insertTask(id, t));
      if (row !== undefined) return { task: taskOf(row), created: true };
      // A retry whose first insert landed finds its own row; a taken key, the task that holds it.
      const [held] = await this.sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM tasks WHERE id = $1 OR key = $2`, [id, t.key]);
      return { task: taskOf(held!), created: held!.id === id };
    });
  }

  /**
   * The oldest queued task this worker can take (rules.ts `mismatch`: its
   * agent, the labels it requires, a resume's birth host and folder), outside
   * the queues `closed` (over their budget), now this worker's for one lease;
   * null when there is none.
   */
  async claim(worker: string, offer: Offer, leaseMs: number, closed: readonly string[] = []): Promise<Task | null> {
    // Not retried: a claim whose answer was lost is this worker's lease that lapses unused (its agent never started: queued again).
    const [row] = await this.sql.unsafe<Row[]>(
      `UPDATE tasks SET state = 'running', attempt = attempt + 1, worker = $1, agent_started = false, spent_micro_usd = NULL,
         lease_expires_at = now() + $2 * interval '1 millisecond'
       WHERE id = (SELECT id FROM tasks WHERE state = 'queued'
           AND request->>'agent' = ANY(${textArray("$3")}) AND requires <@ ${textArray("$4")}
           AND (birth_machine IS NULL OR (birth_machine = $5 AND starts_with(birth_folder, $6 || '/')))
           AND NOT (queue = ANY(${textArray("$7")}))
         ORDER BY created_at FOR UPDATE SKIP LOCKED LIMIT 1)
       RETURNING ${COLUMNS}`,
      [
        worker,
        leaseMs,
        JSON.stringify(offer.agents),
        JSON.stringify(offer.labels),
        offer.machineId,
        offer.workspaces,
        JSON.stringify(closed),
      ],
    );
    return row === undefined ? null : taskOf(row);
  }

  /**
   * Renew the lease, with the run's cost so far (`spent`, micro-USD; null:
   * none told yet): "cancel" when `agentport cancel` asked the task to stop,
   * "lost" when it is no longer this worker's.
   */
  async renew(lease: Lease, leaseMs: number, spent: number | null = null): Promise<"held" | "cancel" | "lost"> {
    const set = `lease_expires_at = now() + $4 * interval '1 millisecond', spent_micro_usd = COALESCE($5, spent_micro_usd)`;
    const done = await this.fenced(set, lease, [leaseMs, spent], "", HELD);
    return done === null ? "lost" : done.cancel ? "cancel" : "held";
  }

  /** The agent is about to start on `commit` (a lapse from now on is an interruption): "cancel" when a cancel came first, "lost" when the lease is. */
  async agentStarting(lease: Lease, commit: string | null): Promise<"started" | "cancel" | "lost"> {
    const set = `agent_started = NOT cancel_requested, runs = runs + (NOT cancel_requested)::int, commit = $4, started_at = now()`;
    const done = await this.fenced(set, lease, [commit], "AND NOT agent_started", `${HELD} AND (agent_started OR cancel_requested)`);
    return done === null ? "lost" : done.cancel ? "cancel" : "started";
  }

  /** The attempt's result (`done`, or `cancelled` when a cancel stopped it), its patch, stream and gates, written only while its lease is current; false when refused. */
  async finish(
    lease: Lease,
    verdict: unknown,
    exitCode: number,
    state: "done" | "cancelled" = "done",
    kept: { patch: Kept | null; stream: Kept | null; gates?: GateResult[] | null } = { patch: null, stream: null },
  ): Promise<boolean> {
    const set = `state = $6, verdict = $4::text::json, exit_code = $5, finished_at = now(), worker = NULL, lease_expires_at = NULL, patch = $7, patch_bytes = $8, stream = $9, stream_bytes = $10, gate_results = $11::text::json`;
    const { patch, stream, gates } = kept;
    const params = [
      JSON.stringify(verdict),
      exitCode,
      state,
      patch?.gzipped ?? null,
      patch?.bytes ?? null,
      stream?.gzipped ?? null,
      stream?.bytes ?? null,
      gates == null ? null : JSON.stringify(gates),
    ];
    return (await this.fenced(set, lease, params, "", `state = $4`, [state])) !== null;
  }

  /** A task's stored patch or stream, unzipped; null when none is stored. */
  kept(id: string, what: "patch" | "stream"): Promise<Uint8Array | null> {
    return retrying(async () => {
      const [row] = await this.sql.unsafe<{ kept: Uint8Array | null }[]>(
        `SELECT ${what === "patch" ? "patch" : "stream"} AS kept FROM tasks WHERE id = $1`,
        [id],
      );
      return row?.kept ? Bun.gunzipSync(new Uint8Array(row.kept)) : null;
    });
  }

  /** Give a claimed task back untouched (its agent never started: a drain). */
  async release(lease: Lease): Promise<boolean> {
    return (
      (await this.fenced(
        `state = 'queued', worker = NULL, lease_expires_at = NULL`,
        lease,
        [],
        "AND NOT agent_started",
        `state = 'queued'`,
      )) !== null
    );
  }

  /**
   * A write of the lease holder: only while (id, attempt, worker) holds an
   * unexpired lease. Retried after a lost connection, when the first try may
   * have landed: `landed` tells, for this attempt's row (no one else writes a
   * row under our attempt number), whether it did.
   */
  private fenced(set: string, lease: Lease, extra: unknown[], also: string, landed: string, landedExtra: unknown[] = []): Promise<Fenced> {
    const key = [lease.id, lease.attempt, lease.worker];
    return retrying(async (again) => {
      const [done] = await this.sql.unsafe<{ cancel_requested: boolean }[]>(
        `UPDATE tasks SET ${set} WHERE id = $1 AND attempt = $2 AND worker = $3 AND ${HELD} ${also} RETURNING cancel_requested`,
        [...key, ...extra],
      );
      if (done !== undefined || !again) return done === undefined ? null : { cancel: done.cancel_requested };
      const [found] = await this.sql.unsafe<{ cancel_requested: boolean }[]>(
        `SELECT cancel_requested FROM tasks WHERE id = $1 AND attempt = $2 AND (worker = $3 OR worker IS NULL) AND ${landed}`,
        [...key, ...landedExtra],
      );
      return found === undefined ? null : { cancel: found.cancel_requested };
    });
  }

  /** `agentport cancel`: a queued task ends `cancelled` now; a running one is asked to stop (its worker does at its next beat). */
  cancel(id: string): Promise<CancelOutcome> {
    return retrying(async () => {
      const [now] = await this.sql.unsafe<{ state: string }[]>(
        `UPDATE tasks SET state = 'cancelled', exit_code = 130, finished_at = now() WHERE id = $1 AND state = 'queued' RETURNING state`,
        [id],
      );
      if (now !== undefined) return "cancelled";
      const [asked] = await this.sql.unsafe<{ state: string }[]>(
        `UPDATE tasks SET cancel_requested = true WHERE id = $1 AND state = 'running' RETURNING state`,
        [id],
      );
      if (asked !== undefined) return "requested";
      // A retry whose first update landed finds the task final: said as "final", which it is.
      const [found] = await this.sql.unsafe<{ state: string }[]>(`SELECT state FROM tasks WHERE id = $1`, [id]);
      return found === undefined ? "unknown" : "final";
    });
  }

  /** Settle every expired lease (afterLapse); how many. Any worker and any reader may do it: rows another settles are skipped. */
  settleExpired(): Promise<number> {
    return retrying(() =>
      this.sql.begin(async (tx) => {
        const lapsed = await tx.unsafe<{ id: string; agent_started: boolean; runs: number; retries: number; cancel_requested: boolean }[]>(
          `SELECT id, agent_started, runs, retries, cancel_requested FROM tasks WHERE state = 'running' AND lease_expires_at <= now() FOR UPDATE SKIP LOCKED`,
        );
        for (const l of lapsed) {
          const next = afterLapse({ agentStarted: l.agent_started, runs: l.runs, retries: l.retries, cancelRequested: l.cancel_requested });
          const ended = next === "queued" ? "" : `, exit_code = 130, finished_at = now()`;
          await tx.unsafe(
            `UPDATE tasks SET state = $2, worker = NULL, lease_expires_at = NULL, agent_started = false${ended} WHERE id = $1`,
            [l.id, next],
          );
        }
        return lapsed.length;
      }),
    );
  }

  /** Set a queue's budget: `budgetMicroUsd` per `per`. */
  setBudget(name: string, budgetMicroUsd: number, per: Period): Promise<unknown> {
    return retrying(() =>
      this.sql.unsafe(
        `INSERT INTO queues (name, budget_micro_usd, per) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET budget_micro_usd = EXCLUDED.budget_micro_usd, per = EXCLUDED.per`,
        [name, budgetMicroUsd, per],
      ),
    );
  }

  /**
   * Every queue with a budget, and what its tasks cost in the current period:
   * those finished in it (their verdict's cost, or an interrupted attempt's
   * last cost told; a verdict without a cost counted apart) and those running
   * (their cost so far, renewed with their lease).
   */
  budgets(): Promise<Budget[]> {
    return retrying(async () => {
      const rows = await this.sql.unsafe<{ name: string; budget: string; per: Period; spent: string; running: string; unknown: string }[]>(
        `SELECT q.name, q.budget_micro_usd::text AS budget, q.per,
           COALESCE(SUM(COALESCE((t.verdict->>'cost_micro_usd')::bigint, t.spent_micro_usd)) FILTER (WHERE t.state <> 'running'), 0)::text AS spent,
           COALESCE(SUM(t.spent_micro_usd) FILTER (WHERE t.state = 'running'), 0)::text AS running,
           COUNT(t.id) FILTER (WHERE t.verdict->>'status' IS NOT NULL AND t.verdict->>'cost_micro_usd' IS NULL)::text AS unknown
         FROM queues q LEFT JOIN tasks t ON t.queue = q.name AND (t.finished_at >= date_trunc(q.per, now()) OR t.state = 'running')
         GROUP BY q.name ORDER BY q.name`,
      );
      return rows.map((r) => ({
        name: r.name,
        budgetMicroUsd: Number(r.budget),
        per: r.per,
        spentMicroUsd: Number(r.spent) + Number(r.running),
        runningMicroUsd: Number(r.running),
        unknownCosts: Number(r.unknown),
      }));
    });
  }

  /** The git bundle stored with a task, or null. */
  bundle(id: string): Promise<Uint8Array | null> {
    return retrying(async () => {
      const [row] = await this.sql.unsafe<{ bundle: Uint8Array | null }[]>(`SELECT bundle FROM tasks WHERE id = $1`, [id]);
      return row?.bundle ?? null;
    });
  }

  get(id: string): Promise<Task | null> {
    return retrying(async () => {
      const [row] = await this.sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM tasks WHERE id = $1`, [id]);
      return row === undefined ? null : taskOf(row);
    });
  }

  list(): Promise<Task[]> {
    return retrying(async () =>
      (await this.sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM tasks ORDER BY created_at, group_id, arm, id`)).map(taskOf),
    );
  }
}
