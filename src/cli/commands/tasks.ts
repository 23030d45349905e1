// `agentport tasks`, `agentport task ID`, `agentport wait ID`: the fleet
// queue as its database has it. Reading settles expired leases first, so a
// dead worker's task is seen for what it is.
import { defineCommand } from "citty";
import { EXIT } from "../../core/exit.ts";
import { safeJson } from "../../core/text.ts";
import { isFinal } from "../../fleet/rules.ts";
import type { Queue, Task } from "../../fleet/queue.ts";
import { AgentportError, usageError } from "../errors.ts";
import { queueArgs, usingQueue } from "../queue-option.ts";
import { writeResult } from "../stdout.ts";

const line = (t: Task): string =>
  [t.id, t.state.padEnd(11), `attempt ${t.attempt}`, t.exit_code === null ? "" : `exit ${t.exit_code}`, t.prompt.replace(/\s+/g, " ").slice(0, 60)].filter(Boolean).join("  ");

/** The queue, its expired leases settled first (a dead worker's task is seen for what it is). */
const withQueue = <T>(args: Record<string, unknown>, body: (queue: Queue) => Promise<T>): Promise<T> =>
  usingQueue(args, async (queue) => {
    await queue.settleExpired();
    return body(queue);
  });

async function named(queue: Queue, id: unknown): Promise<Task> {
  const task = typeof id === "string" ? await queue.get(id) : null;
  if (task === null) throw usageError(`no task ${String(id)} in this queue: agentport tasks lists them`);
  return task;
}

/** A final task's exit code, as `run`'s would be. */
const exitOf = (t: Task): number => t.exit_code ?? (t.state === "cancelled" ? EXIT.interrupted : EXIT.failed);

export const tasksCommand = defineCommand({
  meta: { name: "tasks", description: "The fleet queue's tasks, oldest first: state, attempt, exit code" },
  args: { json: { type: "boolean", description: "One JSON object per line" }, ...queueArgs },
  async run({ args }) {
    const tasks = await withQueue(args, (q) => q.list());
    if (tasks.length > 0) await writeResult(tasks.map((t) => (args.json ? safeJson(t) : line(t))).join("\n"));
    return 0;
  },
});

export const taskCommand = defineCommand({
  meta: { name: "task", description: "One task of the fleet queue: state, attempts, result" },
  args: { id: { type: "positional", required: true, description: "The task's id" }, json: { type: "boolean", description: "The task as one JSON object" }, ...queueArgs },
  async run({ args }) {
    const task = await withQueue(args, (q) => named(q, args.id));
    await writeResult(args.json ? safeJson(task) : `${line(task)}\nverdict: ${task.verdict === null ? "none" : safeJson(task.verdict)}`);
    return 0;
  },
});

export const waitCommand = defineCommand({
  meta: { name: "wait", description: "Block until each task has its final result; exit code as run's for one task, the worst for several" },
  args: {
    id: { type: "positional", required: true, description: "The tasks' ids" },
    timeout: { type: "string", valueHint: "S", description: "Give up after S seconds (exit 4)" },
    json: { type: "boolean", description: "Each task as one JSON object per line" },
    ...queueArgs,
  },
  async run({ args }) {
    const ids = (args._ as string[] | undefined) ?? [String(args.id)];
    const seconds = args.timeout === undefined ? null : Number(args.timeout);
    if (seconds !== null && !(seconds >= 0)) throw usageError(`--timeout must be a number of seconds, got "${args.timeout}"`);
    const end = seconds === null ? Infinity : performance.now() + seconds * 1000;
    const tasks = await withQueue(args, async (q) => {
      for (;;) {
        const now = await Promise.all(ids.map((id) => named(q, id)));
        const open = now.find((t) => !isFinal(t.state));
        if (open === undefined) return now;
        if (performance.now() > end) throw new AgentportError("supervision", `task ${open.id} is still ${open.state} after ${seconds} s`);
        await Bun.sleep(250);
        await q.settleExpired();
      }
    });
    await writeResult(tasks.map((t) => (args.json ? safeJson(t) : line(t))).join("\n"));
    return Math.max(...tasks.map(exitOf));
  },
});
