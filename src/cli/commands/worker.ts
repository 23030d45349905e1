// `agentport worker`: run the fleet's queued tasks on this box until
// Ctrl-C / SIGTERM, which drains (no more claims; running tasks finish, or
// are stopped after --drain-timeout).
import { defineCommand } from "citty";
import { LEASE_MS } from "../../fleet/rules.ts";
import { Worker } from "../../fleet/worker.ts";
import { usageError } from "../errors.ts";
import { log, setVerbosity } from "../output.ts";
import { verbosityArgs } from "../common.ts";
import { openQueue, queueArgs } from "../queue-option.ts";
import { selfArgv } from "../self.ts";

function whole(name: string, raw: unknown, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw usageError(`--${name} must be a whole number from ${min} to ${max}, got "${String(raw)}"`);
  return n;
}

export const workerCommand = defineCommand({
  meta: { name: "worker", description: "Run the fleet's queued tasks on this box: claim, clone, run as `run` does, store the result; Ctrl-C drains" },
  args: {
    concurrency: { type: "string", valueHint: "N", description: "Tasks run at a time (default 1)" },
    once: { type: "boolean", description: "Claim at most one task, run it, exit" },
    "drain-timeout": { type: "string", valueHint: "S", description: "On Ctrl-C / SIGTERM, how long running tasks may finish before they are stopped (default 60)" },
    ...queueArgs,
    ...verbosityArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const concurrency = whole("concurrency", args.concurrency, 1, 1, 64);
    const drainMs = whole("drain-timeout", args["drain-timeout"], 60, 0, 86_400) * 1000;
    // Hidden, for tests: a short lease.
    const leaseMs = whole("AGENTPORT_LEASE_MS", process.env.AGENTPORT_LEASE_MS, LEASE_MS, 500, 3_600_000);
    const { home, url, queue } = await openQueue(args);
    const worker = new Worker({ queue, ledger: url, home, concurrency, once: Boolean(args.once), leaseMs, drainMs, say: (line) => log.info(line), self: selfArgv() });
    const drain = () => worker.drain();
    process.on("SIGTERM", drain);
    process.on("SIGINT", drain);
    log.info(`worker ${worker.id}: ${concurrency} at a time`);
    try {
      await worker.run();
    } finally {
      process.off("SIGTERM", drain);
      process.off("SIGINT", drain);
      await queue.close();
    }
    return 0;
  },
});
