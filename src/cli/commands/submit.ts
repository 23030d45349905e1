// `agentport submit`: queue one task for the fleet's workers. Its run flags
// are resolved and checked here, as `run` checks them (a flag the agent
// cannot take is refused now, not on a box later); the task keeps the flags
// given, never the environment's values.
import { defineCommand } from "citty";
import { adapterOf } from "../../agents/table.ts";
import { requestIssues } from "../../agents/settings.ts";
import { resolveSettings } from "../../config/resolve.ts";
import { safeJson } from "../../core/text.ts";
import type { TaskRequest } from "../../fleet/queue.ts";
import { usageError } from "../errors.ts";
import { queueArgs, usingQueue } from "../queue-option.ts";
import { writeResult } from "../stdout.ts";

/** The run flags a task takes (each stored as given, passed to the worker's `run`). */
const RUN_FLAGS = ["agent", "model", "timeout", "max-turns"] as const;

export const submitCommand = defineCommand({
  meta: { name: "submit", description: "Queue a task for the fleet's workers: the code from a git URL at a ref, the run flags checked now; prints its id" },
  args: {
    words: { type: "positional", required: false, description: "The prompt (or --prompt TEXT)" },
    prompt: { type: "string", valueHint: "TEXT", description: "The prompt, for one that starts with \"-\"" },
    agent: { type: "string", valueHint: "NAME", description: "pi, claude, codex, gemini or opencode (default claude)" },
    model: { type: "string", valueHint: "ID", description: "The model, as for run" },
    timeout: { type: "string", valueHint: "S", description: "The phase's timeout in seconds, as for run" },
    "max-turns": { type: "string", valueHint: "N", description: "As for run" },
    repo: { type: "string", valueHint: "URL", description: "The git repository the worker clones (required)" },
    ref: { type: "string", valueHint: "REF", description: "The branch, tag or commit to check out (default: the repository's HEAD)" },
    key: { type: "string", valueHint: "KEY", description: "Idempotency key: the same key returns the task already queued" },
    retries: { type: "string", valueHint: "N", description: "Run again after an interruption (a worker lost mid-run) up to N times (default 0)" },
    json: { type: "boolean", description: "Print the task as one JSON object" },
    ...queueArgs,
  },
  async run({ args }) {
    const words = (args._ as string[] | undefined) ?? [];
    const prompt = typeof args.prompt === "string" ? args.prompt : words.join(" ");
    if (!prompt.trim()) throw usageError('no prompt: give it as words, or with --prompt TEXT');
    if (typeof args.repo !== "string" || args.repo === "") throw usageError("no code: give --repo URL (a git URL the workers can clone), and --ref REF for other than its HEAD");
    const retries = args.retries === undefined ? 0 : Number(args.retries);
    if (!Number.isInteger(retries) || retries < 0 || retries > 100) throw usageError(`--retries must be a whole number from 0 to 100, got "${args.retries}"`);
    const request: TaskRequest = {};
    for (const flag of RUN_FLAGS) if (typeof args[flag] === "string") request[flag] = args[flag];
    const resolved = resolveSettings({ flags: request });
    if (!resolved.ok) throw usageError(resolved.issues[0]!);
    const agent = resolved.settings.agent;
    const refused = requestIssues(agent, adapterOf(agent).settings, resolved.settings, resolved.sources);
    if (refused.length > 0) throw usageError(refused[0]!);
    request.agent = agent;
    const key = typeof args.key === "string" && args.key !== "" ? args.key : null;
    const ref = typeof args.ref === "string" ? args.ref : null;
    const { task } = await usingQueue(args, (queue) => queue.submit({ prompt, request, repo: args.repo as string, ref, key, retries }));
    await writeResult(args.json ? safeJson(task) : task.id);
    return 0;
  },
});
