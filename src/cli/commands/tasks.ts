// `agentport tasks`, `task ID`, `wait ID…`, `results [ID…]`: the fleet queue
// as its database has it. Reading settles expired leases first, so a dead
// worker's task is seen for what it is; a queued task no live worker can
// take says why.
import { defineCommand } from "citty";
import { EXIT } from "../../core/exit.ts";
import { safeJson } from "../../core/text.ts";
import { isFinal } from "../../fleet/rules.ts";
import type { Queue, Task } from "../../fleet/queue.ts";
import { pending, rankGroup, rankingExit, type Ranking } from "../../fleet/arms.ts";
import type { Group } from "../../fleet/groups.ts";
import { rankingOut } from "../fleet-arms.ts";
import { STORED_MAX_BYTES } from "../../fleet/db.ts";
import { taskJson, type ResultJson, type TaskJson } from "../../fleet/records.ts";
import { listedTask, listedTasks } from "../task-listing.ts";
import { AgentportError, usageError } from "../errors.ts";
import { queueArgs, usingQueue } from "../queue-option.ts";
import { writeResult } from "../stdout.ts";

const line = (t: TaskJson): string =>
  [
    t.id,
    t.state.padEnd(11),
    `attempt ${t.attempt}`,
    t.exit_code === null ? "" : `exit ${t.exit_code}`,
    t.group_id === null ? "" : `arm ${t.arm} of group ${t.group_id}`,
    t.prompt.replace(/\s+/g, " ").slice(0, 60),
    t.waiting ? `(waiting: ${t.waiting})` : "",
  ]
    .filter(Boolean)
    .join("  ");

/** The queue, its expired leases settled first (a dead worker's task is seen for what it is). */
export const withQueue = <T>(args: Record<string, unknown>, body: (queue: Queue) => Promise<T>): Promise<T> =>
  usingQueue(args, async (queue) => {
    await queue.settleExpired();
    return body(queue);
  });

export async function named(queue: Queue, id: unknown): Promise<Task> {
  const task = typeof id === "string" ? await queue.get(id) : null;
  if (task !== null) return task;
  if (typeof id === "string" && (await queue.groups.get(id)) !== null)
    throw usageError(`${id} is a group of arms: give it alone (agentport wait ${id}, agentport results ${id})`);
  throw usageError(`no task ${String(id)} in this queue: agentport tasks lists them`);
}

/** The one id given when it names a group of arms, else null. */
const groupNamed = async (q: Queue, wanted: string[]): Promise<Group | null> => (wanted.length === 1 ? q.groups.get(wanted[0]!) : null);

/** `look` every 250 ms (expired leases settled between) until it gives a result; past `seconds`, exit 4 saying what is still open. */
async function polled<T>(q: Queue, seconds: number | null, look: () => Promise<{ done: T } | { open: string }>): Promise<T> {
  const end = seconds === null ? Infinity : performance.now() + seconds * 1000;
  for (;;) {
    const now = await look();
    if ("done" in now) return now.done;
    if (performance.now() > end) throw new AgentportError("supervision", `${now.open} after ${seconds} s`);
    await Bun.sleep(250);
    await q.settleExpired();
  }
}

/** A final task's exit code, as `run`'s would be. */
const exitOf = (t: Task): number => t.exit_code ?? (t.state === "cancelled" ? EXIT.interrupted : EXIT.failed);

const ids = (args: { _?: unknown; id?: unknown }): string[] =>
  ((args._ as string[] | undefined) ?? []).concat(args._ === undefined && typeof args.id === "string" ? [args.id] : []);

export const tasksCommand = defineCommand({
  meta: {
    name: "tasks",
    description: "The fleet queue's tasks, oldest first: state, attempt, exit code; a queued task no live worker can take says why",
  },
  args: { json: { type: "boolean", description: "One JSON object per line" }, ...queueArgs },
  async run({ args }) {
    const tasks = await withQueue(args, async (q) => listedTasks(q, await q.list()));
    if (tasks.length > 0) await writeResult(tasks.map((t) => (args.json ? safeJson(t) : line(t))).join("\n"));
    return 0;
  },
});

export const taskCommand = defineCommand({
  meta: { name: "task", description: "One task of the fleet queue: state, attempts, result" },
  args: {
    id: { type: "positional", required: true, description: "The task's id" },
    json: { type: "boolean", description: "The task as one JSON object" },
    ...queueArgs,
  },
  async run({ args }) {
    const task = await withQueue(args, async (q) => listedTask(q, await named(q, args.id)));
    await writeResult(args.json ? safeJson(task) : `${line(task)}\nverdict: ${task.verdict === null ? "none" : safeJson(task.verdict)}`);
    return 0;
  },
});

export const waitCommand = defineCommand({
  meta: {
    name: "wait",
    description:
      "Block until each task has its final result; exit code as run's for one task, the worst for several. A group of arms (submit --arms): until every arm has reported, then its ranking (exit 0: a green arm, 1: none)",
  },
  args: {
    id: { type: "positional", required: true, description: "The tasks' ids, or one group's id" },
    timeout: { type: "string", valueHint: "S", description: "Give up after S seconds (exit 4)" },
    json: { type: "boolean", description: "Each task as one JSON object per line" },
    ...queueArgs,
  },
  async run({ args }) {
    const seconds = args.timeout === undefined ? null : Number(args.timeout);
    if (seconds !== null && !(seconds >= 0)) throw usageError(`--timeout must be a number of seconds, got "${args.timeout}"`);
    const waited: Ranking | Task[] = await withQueue(args, async (q): Promise<Ranking | Task[]> => {
      const group = await groupNamed(q, ids(args));
      if (group !== null)
        return polled<Ranking>(q, seconds, async () => {
          const now = (await q.groups.get(group.id))!;
          const open = pending(now);
          return open === null ? { done: rankGroup(now) } : { open: `group ${group.id}: ${open}` };
        });
      return polled<Task[]>(q, seconds, async () => {
        const now = await Promise.all(ids(args).map((id) => named(q, id)));
        const open = now.find((t) => !isFinal(t.state));
        return open === undefined ? { done: now } : { open: `task ${open.id} is still ${open.state}` };
      });
    });
    if ("arms" in waited) {
      await writeResult(rankingOut(waited, args.json));
      return rankingExit(waited);
    }
    // Every task is final here: none waits.
    await writeResult(waited.map((t) => (args.json ? safeJson(taskJson(t)) : line(taskJson(t)))).join("\n"));
    return Math.max(...waited.map(exitOf));
  },
});

/** A finished task's result: its verdict as the worker's run gave it. */
const resultOf = (t: Task): ResultJson => ({
  id: t.id,
  state: t.state,
  attempt: t.attempt,
  runs: t.runs,
  exit_code: exitOf(t),
  finished_at: t.finished_at,
  commit: t.commit,
  patch_bytes: t.patch_bytes,
  verdict: t.verdict as ResultJson["verdict"],
});

function resultLine(t: Task): string {
  const v = (t.verdict ?? {}) as { status?: string; session_id?: string | null; cost_micro_usd?: number | null; error?: { kind?: string } };
  const cost = typeof v.cost_micro_usd === "number" ? `$${(v.cost_micro_usd / 1e6).toFixed(4)}` : "";
  return [
    t.id,
    t.state.padEnd(11),
    `exit ${exitOf(t)}`,
    v.status ?? (v.error?.kind ? `error ${v.error.kind}` : "no verdict"),
    cost,
    v.session_id ? `session ${v.session_id}` : "",
  ]
    .filter(Boolean)
    .join("  ");
}

export const resultsCommand = defineCommand({
  meta: {
    name: "results",
    description:
      "The results of finished tasks (all, or the ids given): state, exit code, verdict. A group of arms (submit --arms): its ranking once every arm has reported (exit 0: a green arm, 1: none)",
  },
  args: {
    id: { type: "positional", required: false, description: "Task ids (default: every finished task), or one group's id" },
    json: {
      type: "boolean",
      description: "One JSON object per task and line: id, state, attempt, runs, exit_code, finished_at, commit, patch_bytes, verdict",
    },
    patch: {
      type: "boolean",
      description:
        "The patch of one task's workspace after its run (tracked and untracked, not ignored files, against the commit it ran on), as git apply takes it",
    },
    stream: {
      type: "boolean",
      description: "One task's run stream as its run folder keeps it (stream.jsonl: the agent's records, redacted)",
    },
    ...queueArgs,
  },
  async run({ args }) {
    const wanted = ids(args);
    if (args.patch || args.stream) {
      const what = args.patch ? "patch" : "stream";
      if (args.patch && args.stream) throw usageError("give --patch or --stream, not both");
      if (wanted.length !== 1) throw usageError(`--${what} takes exactly one task id`);
      const bytes = await withQueue(args, async (q) => {
        const t = await named(q, wanted[0]);
        if (!isFinal(t.state)) throw usageError(`task ${t.id} is still ${t.state}: no result yet (agentport wait ${t.id})`);
        const [size, stored] = what === "patch" ? [t.patch_bytes, t.patch_stored] : [t.stream_bytes, t.stream_stored];
        if (size === null)
          throw usageError(
            `task ${t.id} has no ${what}: its run never started, or its ${what === "patch" ? "workspace" : "run folder"} could not be read`,
          );
        if (!stored)
          throw usageError(
            `task ${t.id}'s ${what} was ${size} bytes, over the ${STORED_MAX_BYTES / 1024 / 1024} MiB a task stores: it was measured, not kept`,
          );
        return q.kept(t.id, what);
      });
      if (bytes !== null && bytes.byteLength > 0) await writeResult(new TextDecoder().decode(bytes));
      return 0;
    }
    const ranking = await withQueue(args, async (q) => {
      const group = await groupNamed(q, wanted);
      const open = group === null ? null : pending(group);
      if (open !== null)
        throw usageError(`group ${group!.id}: ${open}: no ranking until every arm has reported (agentport wait ${group!.id})`);
      return group === null ? null : rankGroup(group);
    });
    if (ranking !== null) {
      await writeResult(rankingOut(ranking, args.json));
      return rankingExit(ranking);
    }
    const tasks = await withQueue(args, async (q) =>
      wanted.length === 0 ? (await q.list()).filter((t) => isFinal(t.state)) : await Promise.all(wanted.map((id) => named(q, id))),
    );
    const open = tasks.find((t) => !isFinal(t.state));
    if (open !== undefined) throw usageError(`task ${open.id} is still ${open.state}: no result yet (agentport wait ${open.id})`);
    if (tasks.length > 0) await writeResult(tasks.map((t) => (args.json ? safeJson(resultOf(t)) : resultLine(t))).join("\n"));
    return 0;
  },
});
