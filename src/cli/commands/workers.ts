// `agentport workers`: the fleet's live workers (their row renewed by
// heartbeat within the lease): host, labels, agents, the tasks they hold.
import { defineCommand } from "citty";
import { safeJson } from "../../core/text.ts";
import { hostLabel } from "../../io/host.ts";
import { workerJson } from "../../fleet/records.ts";
import { queueArgs, usingQueue } from "../queue-option.ts";
import { writeResult } from "../stdout.ts";

export const workersCommand = defineCommand({
  meta: {
    name: "workers",
    description: "The fleet's live workers: host, labels, agents, the tasks each runs, until when its heartbeat holds",
  },
  args: { json: { type: "boolean", description: "One JSON object per worker and line" }, ...queueArgs },
  async run({ args }) {
    const workers = await usingQueue(args, (q) => q.roster.live());
    const line = (w: (typeof workers)[number]) =>
      [
        w.id,
        hostLabel({ hostname: w.hostname, machineId: w.machineId }),
        `agents ${w.agents.join(",")}`,
        w.labels.length === 0 ? "" : `labels ${w.labels.join(",")}`,
        `running ${w.tasks.length}/${w.concurrency}${w.tasks.length === 0 ? "" : ` (${w.tasks.join(", ")})`}`,
        `until ${w.expires_at}`,
      ]
        .filter(Boolean)
        .join("  ");
    if (workers.length > 0) await writeResult(workers.map((w) => (args.json ? safeJson(workerJson(w)) : line(w))).join("\n"));
    return 0;
  },
});
