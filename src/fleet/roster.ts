// The fleet's workers as the database knows them: each worker's row (host,
// labels, agents, concurrency), kept alive by its heartbeat like a lease; a
// worker whose row expired is gone. Read by `workers` and by `tasks` (a task
// no live worker can take says so).
import type { SQL } from "bun";
import { iso, jsonArray, retrying, textArray } from "./db.ts";
import type { Offer } from "./rules.ts";

export interface WorkerRow extends Offer {
  id: string;
  concurrency: number;
  started_at: string;
  /** When its row lapses unless it beats again (the database's clock). */
  expires_at: string;
  /** The tasks it holds now. */
  tasks: string[];
}

type Raw = Omit<WorkerRow, "labels" | "agents" | "tasks" | "machineId"> & {
  machine_id: string;
  labels: string;
  agents: string;
  tasks: string;
};

/** A worker row that expired this long ago is deleted by the next worker to start. */
const FORGET = "1 day";

export class Roster {
  constructor(private readonly sql: SQL) {}

  /** Enter (or renew) this worker's row for `leaseMs`. */
  beat(id: string, offer: Offer, concurrency: number, leaseMs: number): Promise<unknown> {
    return retrying(() =>
      this.sql.unsafe(
        `INSERT INTO workers (id, hostname, machine_id, workspaces, labels, agents, concurrency, expires_at)
         VALUES ($1, $2, $3, $4, ${textArray("$5")}, ${textArray("$6")}, $7, now() + $8 * interval '1 millisecond')
         ON CONFLICT (id) DO UPDATE SET expires_at = EXCLUDED.expires_at`,
        [
          id,
          offer.hostname,
          offer.machineId,
          offer.workspaces,
          JSON.stringify(offer.labels),
          JSON.stringify(offer.agents),
          concurrency,
          leaseMs,
        ],
      ),
    );
  }

  /** A worker that stops leaves; long-expired rows of others go too. */
  leave(id: string): Promise<unknown> {
    return retrying(() => this.sql.unsafe(`DELETE FROM workers WHERE id = $1 OR expires_at < now() - interval '${FORGET}'`, [id]));
  }

  /** The live workers, oldest first, each with the tasks it holds. */
  live(): Promise<WorkerRow[]> {
    return retrying(async () => {
      const rows = await this.sql.unsafe<Raw[]>(
        `SELECT w.id, w.hostname, w.machine_id, w.workspaces, ${jsonArray("w.labels", "labels")}, ${jsonArray("w.agents", "agents")}, w.concurrency, ${iso("w.started_at", "started_at")}, ${iso("w.expires_at", "expires_at")},
           COALESCE((SELECT json_agg(t.id ORDER BY t.id) FROM tasks t WHERE t.worker = w.id AND t.state = 'running'), '[]')::text AS tasks
         FROM workers w WHERE w.expires_at > now() ORDER BY w.started_at, w.id`,
      );
      return rows.map(({ machine_id, labels, agents, tasks, ...rest }) => ({
        ...rest,
        machineId: machine_id,
        labels: JSON.parse(labels),
        agents: JSON.parse(agents),
        tasks: JSON.parse(tasks),
      }));
    });
  }
}
