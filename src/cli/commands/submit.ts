// `agentport submit`: queue one task for the fleet's workers. Its run flags
// are resolved and checked here, as `run` checks them (a flag the agent
// cannot take is refused now, not on a box later); the task keeps the flags
// given, never the environment's values. `--resume TASK` continues that
// task's session, claimed only by a worker on its birth host whose
// workspaces hold its birth folder. `--arms N` queues a best-of-N group:
// one task per arm (fleet-arms.ts), ranked by `wait GROUP` / `results GROUP`.
import { defineCommand } from "citty";
import { adapterOf } from "../../agents/table.ts";
import { MAX_ARMS, MIN_ARMS } from "../../bon/options.ts";
import { requestIssues } from "../../agents/settings.ts";
import { resolveSettings } from "../../config/resolve.ts";
import { safeJson } from "../../core/text.ts";
import { isFinal } from "../../fleet/rules.ts";
import type { NewTask, Queue, TaskRequest } from "../../fleet/queue.ts";
import { usageError } from "../errors.ts";
import { listedTask } from "../task-listing.ts";
import { groupJson } from "../../fleet/records.ts";
import { armsAsked } from "../fleet-arms.ts";
import { codeOf } from "../fleet-code.ts";
import { labels, queueNameOf } from "../fleet-flags.ts";
import { openExistingLedger } from "../ledger-option.ts";
import { queueArgs, usingQueue, type QueueChoice } from "../queue-option.ts";
import { writeResult } from "../stdout.ts";

/** The run flags a task takes (each stored as given, passed to the worker's `run`). */
const RUN_FLAGS = ["agent", "model", "timeout", "max-turns", "max-cost"] as const;

/** What a resume task continues: the session of a finished task, where it was born (the ledger's row). */
async function birthOf(
  queue: Queue,
  choice: QueueChoice,
  id: string,
): Promise<Pick<NewTask, "resume" | "repo" | "ref" | "bundle"> & { agent: string }> {
  const task = await queue.get(id);
  if (task === null) throw usageError(`--resume: no task ${id} in this queue: agentport tasks lists them`);
  if (!isFinal(task.state)) throw usageError(`--resume: task ${id} is still ${task.state}: wait for it first (agentport wait ${id})`);
  const session = (task.verdict as { session_id?: unknown } | null)?.session_id;
  if (typeof session !== "string")
    throw usageError(`--resume: task ${id} has no session to continue (its agent never ran, or its verdict names none)`);
  await using ledger = await openExistingLedger(choice.ledger);
  const found = await ledger?.resolveSession(session);
  if (found?.kind !== "found" || found.session.machine_id === null)
    throw usageError(`--resume: session ${session} of task ${id} is not in the ledger with its birth host`);
  const s = found.session;
  return {
    repo: task.repo,
    ref: task.ref,
    bundle: task.bundle_bytes === null ? null : await queue.bundle(id),
    agent: s.agent,
    resume: { session: s.id, machineId: s.machine_id!, hostname: s.host, folder: s.cwd },
  };
}

export const submitCommand = defineCommand({
  meta: {
    name: "submit",
    description:
      "Queue a task for the fleet's workers (or with --arms N a best-of-N group, one task per arm): the run flags checked now; prints its id",
  },
  args: {
    words: { type: "positional", required: false, description: "The prompt (or --prompt TEXT)" },
    prompt: { type: "string", valueHint: "TEXT", description: 'The prompt, for one that starts with "-"' },
    agent: { type: "string", valueHint: "NAME", description: "pi, claude, codex, gemini or opencode (default claude)" },
    model: { type: "string", valueHint: "ID", description: "The model, as for run" },
    timeout: { type: "string", valueHint: "S", description: "The phase's timeout in seconds, as for run" },
    "max-turns": { type: "string", valueHint: "N", description: "As for run" },
    "max-cost": { type: "string", valueHint: "USD", description: "Stop the run when its running cost passes USD, as for run" },
    repo: {
      type: "string",
      valueHint: "URL",
      description: "The git repository the worker clones (one of --repo, --bundle, --here; none with --resume)",
    },
    ref: { type: "string", valueHint: "REF", description: "The branch, tag or commit to check out (default: the repository's HEAD)" },
    bundle: { type: "string", valueHint: "FILE", description: "A git bundle stored with the task (up to 64 MiB); the worker clones it" },
    here: {
      type: "boolean",
      description: "This repository's HEAD, bundled and stored with the task (commit first: uncommitted changes are not shipped)",
    },
    key: { type: "string", valueHint: "KEY", description: "Idempotency key: the same key returns the task already queued" },
    retries: {
      type: "string",
      valueHint: "N",
      description: "Run again after an interruption (a worker lost mid-run) up to N times (default 0)",
    },
    queue: {
      type: "string",
      valueHint: "NAME",
      description: "The queue it goes in (default `default`): its budget (agentport queue set) applies",
    },
    requires: { type: "string", valueHint: "LABEL", description: "Only a worker with this --label may claim it (repeatable: every one)" },
    resume: {
      type: "string",
      valueHint: "TASK",
      description: "Continue TASK's session, on its birth host, in its birth folder (the task's code and agent)",
    },
    arms: {
      type: "string",
      valueHint: "N",
      description: `Best-of-N across boxes: queue N arms (${MIN_ARMS} to ${MAX_ARMS}) of the same code and prompt as one group, each a task any free worker runs; prints the group's id, ranked by agentport wait/results GROUP`,
    },
    models: { type: "string", valueHint: "A,B", description: "With --arms: one model per arm, round-robin (at most N)" },
    gate: {
      type: "string",
      valueHint: "CMD",
      description:
        "With --arms: a shell command the worker runs in the arm's workspace after a run that exited 0 (repeatable, in order until one fails); an arm is green when every gate exits 0",
    },
    json: { type: "boolean", description: "Print the task (with --arms: the group and its tasks) as one JSON object" },
    ...queueArgs,
  },
  async run({ args, rawArgs }) {
    const words = (args._ as string[] | undefined) ?? [];
    const prompt = typeof args.prompt === "string" ? args.prompt : words.join(" ");
    if (!prompt.trim()) throw usageError("no prompt: give it as words, or with --prompt TEXT");
    const resuming = typeof args.resume === "string" ? args.resume : null;
    if (resuming !== null && ([args.repo, args.ref, args.bundle, args.agent].some((v) => v !== undefined) || args.here))
      throw usageError("--resume takes the task's code and agent: give no --repo, --ref, --bundle, --here or --agent");
    const retries = args.retries === undefined ? 0 : Number(args.retries);
    if (!Number.isInteger(retries) || retries < 0 || retries > 100)
      throw usageError(`--retries must be a whole number from 0 to 100, got "${args.retries}"`);
    const arms = armsAsked(args, rawArgs);
    if (arms !== null && resuming !== null) throw usageError("--arms starts new sessions: give no --resume");
    const requires = labels(rawArgs, "requires");
    const queueName = queueNameOf(args.queue);
    const request: TaskRequest = {};
    for (const flag of RUN_FLAGS) if (typeof args[flag] === "string") request[flag] = args[flag];
    const check = (r: TaskRequest): string => {
      const resolved = resolveSettings({ flags: r });
      if (!resolved.ok) throw usageError(resolved.issues[0]!);
      const agent = resolved.settings.agent;
      const refused = requestIssues(agent, adapterOf(agent).settings, resolved.settings, resolved.sources);
      if (refused.length > 0) throw usageError(refused[0]!);
      return agent;
    };
    if (resuming === null) request.agent = check(request);
    const given = resuming === null ? codeOf(args, process.cwd()) : null;
    const key = typeof args.key === "string" && args.key !== "" ? args.key : null;
    if (arms !== null) {
      // Each arm's request checked as run checks it (its model too), before anything is queued.
      const requests = Array.from({ length: arms.count }, (_, i) => {
        const armRequest: TaskRequest = { ...request };
        if (arms.models.length > 0) armRequest.model = arms.models[i % arms.models.length]!;
        check(armRequest);
        return armRequest;
      });
      const { group } = await usingQueue(args, (queue) =>
        queue.groups.submit(
          key,
          requests.map((r) => ({
            prompt,
            request: r,
            ...given!,
            resume: null,
            key: null,
            retries,
            requires,
            queue: queueName,
            gates: arms.gates,
          })),
        ),
      );
      await writeResult(args.json ? safeJson(groupJson(group)) : group.id);
      return 0;
    }
    const task = await usingQueue(args, async (queue, choice) => {
      const code = given === null ? await birthOf(queue, choice, resuming!) : { ...given, resume: null };
      if ("agent" in code) request.agent = check({ ...request, agent: code.agent });
      const submitted = await queue.submit({
        prompt,
        request,
        repo: code.repo,
        ref: code.ref,
        bundle: code.bundle,
        resume: code.resume,
        key,
        retries,
        requires,
        queue: queueName,
      });
      return args.json ? listedTask(queue, submitted.task) : submitted.task;
    });
    await writeResult(args.json ? safeJson(task) : task.id);
    return 0;
  },
});
