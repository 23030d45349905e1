// Best-of-N across boxes: a group of arms (`submit --arms N`), each an
// ordinary task carrying the group's id and its arm number. The group and
// all its arms are queued in one transaction (all or none); a key names the
// group, so the same key returns the group already queued.
import type { SQL } from "bun";
import { COLUMNS, insertTask, iso, retrying, taskOf, type NewTask, type Row, type Task } from "./db.ts";

export interface Group {
  id: string;
  key: string | null;
  created_at: string;
  /** Its arms, by arm number. */
  tasks: Task[];
}

export class Groups {
  constructor(private readonly sql: SQL) {}

  /** Queue one task per arm (arm i is `arms[i - 1]`) as one group; with a key already taken, the group that holds it (created: false). */
  submit(key: string | null, arms: NewTask[]): Promise<{ group: Group; created: boolean }> {
    const id = crypto.randomUUID();
    return retrying(async () => {
      const created = await this.sql.begin(async (tx) => {
        const [row] = await tx.unsafe<{ id: string }[]>(
          `INSERT INTO task_groups (id, key, arms) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING id`,
          [id, key, arms.length],
        );
        if (row === undefined) return false;
        for (const [i, arm] of arms.entries())
          await tx.unsafe(...insertTask(crypto.randomUUID(), { ...arm, key: null }, { id, arm: i + 1 }));
        return true;
      });
      // A retry whose first transaction landed finds its own group; a taken key, the group that holds it.
      const [held] = await this.sql.unsafe<{ id: string }[]>(`SELECT id FROM task_groups WHERE id = $1 OR key = $2`, [id, key]);
      return { group: (await this.get(held!.id))!, created: created || held!.id === id };
    });
  }

  /** A group and its arms, or null when there is none by that id. */
  get(id: string): Promise<Group | null> {
    return retrying(async () => {
      const [group] = await this.sql.unsafe<Omit<Group, "tasks">[]>(`SELECT id, key, ${iso("created_at")} FROM task_groups WHERE id = $1`, [
        id,
      ]);
      if (group === undefined) return null;
      const rows = await this.sql.unsafe<Row[]>(`SELECT ${COLUMNS} FROM tasks WHERE group_id = $1 ORDER BY arm`, [id]);
      return { ...group, tasks: rows.map(taskOf) };
    });
  }
}
