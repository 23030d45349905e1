// `agentport queue`: the fleet's queues and their budgets. `queue set NAME
// --budget-usd X --per day` caps what the tasks of queue NAME may cost per
// period (the database's calendar); a worker checks it before each claim.
// `queue` alone lists the budgets with what was spent this period (running
// tasks' cost so far included).
import { defineCommand } from "citty";
import { safeJson } from "../../core/text.ts";
import { queueJson } from "../../fleet/records.ts";
import { overBudget, PERIODS, usd, type Period } from "../../fleet/rules.ts";
import { usageError } from "../errors.ts";
import { queueNameOf } from "../fleet-flags.ts";
import { queueArgs, usingQueue } from "../queue-option.ts";
import { writeResult } from "../stdout.ts";

const ACTIONS = ["list", "set"] as const;

export const queueCommand = defineCommand({
  meta: {
    name: "queue",
    description:
      "The fleet's queues: `queue set NAME --budget-usd X --per day` caps a queue's spend per period; `queue` lists the budgets and what was spent",
  },
  args: {
    action: { type: "positional", required: false, description: `list (default) or set` },
    name: { type: "positional", required: false, description: "set: the queue's name" },
    "budget-usd": { type: "string", valueHint: "X", description: "set: what the queue's tasks may cost per period, in USD" },
    per: { type: "string", valueHint: "PERIOD", description: `set: ${PERIODS.join(", ")} (default day)` },
    json: { type: "boolean", description: "One JSON object per queue and line" },
    ...queueArgs,
  },
  async run({ args }) {
    const action = args.action ?? "list";
    if (!(ACTIONS as readonly string[]).includes(action))
      throw usageError(`queue ${action}: unknown action (known: ${ACTIONS.join(", ")})`);
    if (action === "set") {
      const name = queueNameOf(args.name ?? "");
      const dollars = Number(args["budget-usd"]);
      if (args["budget-usd"] === undefined || !Number.isFinite(dollars) || dollars < 0 || dollars > 1e9)
        throw usageError(`queue set needs --budget-usd X, a number of dollars from 0 (got "${args["budget-usd"] ?? ""}")`);
      const per = (args.per ?? "day") as Period;
      if (!PERIODS.includes(per)) throw usageError(`--per must be one of ${PERIODS.join(", ")}, got "${per}"`);
      await usingQueue(args, (q) => q.setBudget(name, Math.round(dollars * 1e6), per));
      await writeResult(`queue ${name}: $${dollars} per ${per}`);
      return 0;
    }
    const budgets = await usingQueue(args, (q) => q.budgets());
    const line = (b: (typeof budgets)[number]) =>
      `${b.name}  ${usd(b.spentMicroUsd)} of ${usd(b.budgetMicroUsd)} per ${b.per}${b.runningMicroUsd > 0 ? ` (${usd(b.runningMicroUsd)} by running tasks so far)` : ""}${overBudget(b) === null ? "" : "  (closed: its tasks wait)"}`;
    if (budgets.length > 0) await writeResult(budgets.map((b) => (args.json ? safeJson(queueJson(b)) : line(b))).join("\n"));
    return 0;
  },
});
