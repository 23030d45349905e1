// A task as the fleet commands print it: with why it waits when it is queued
// (its queue's budget is closed, or no live worker can take it).
import type { Queue, Task } from "../fleet/queue.ts";
import { taskJson, type TaskJson } from "../fleet/records.ts";
import { overBudget, waiting, type Budget, type Needs, type Offer } from "../fleet/rules.ts";

const needsOf = (t: Task): Needs => ({
  agent: String(t.request.agent),
  requires: t.requires,
  birth: t.birth_machine === null ? null : { machineId: t.birth_machine, hostname: t.birth_host, folder: t.birth_folder ?? "" },
});

/** What a queued task waits for: its queue's budget, else a worker that can take it. */
interface Fleet {
  offers: Offer[];
  budgets: Budget[];
}

const fleetOf = async (q: Queue): Promise<Fleet> => ({ offers: await q.roster.live(), budgets: await q.budgets() });

/** A task as listed: with why it waits, when it is queued and no live worker can take it. */
function listed(t: Task, fleet: Fleet): TaskJson {
  if (t.state !== "queued") return taskJson(t);
  const budget = fleet.budgets.find((b) => b.name === t.queue);
  return taskJson(t, (budget && overBudget(budget)) || waiting(needsOf(t), fleet.offers));
}

/** Tasks as `submit`, `task` and `tasks` print them: why each queued one waits said. */
export async function listedTasks(q: Queue, tasks: Task[]): Promise<TaskJson[]> {
  const fleet = await fleetOf(q);
  return tasks.map((t) => listed(t, fleet));
}

export const listedTask = async (q: Queue, t: Task): Promise<TaskJson> => (await listedTasks(q, [t]))[0]!;
