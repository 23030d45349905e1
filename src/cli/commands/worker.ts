// `agentport worker`: run the fleet's queued tasks on this box until
// Ctrl-C / SIGTERM, which drains (no more claims; running tasks finish, or
// are stopped after --drain-timeout). It offers the agents installed here
// (or those of --agents, each of which must be), and its labels.
import { defineCommand } from "citty";
import { resolveBin } from "../../agents/resolve-bin.ts";
import { adapters } from "../../agents/table.ts";
import { AGENT_NAMES, AGENT_TRAITS } from "../../core/agents.ts";
import { LEASE_MS } from "../../fleet/rules.ts";
import { Worker } from "../../fleet/worker.ts";
import { thisHost } from "../../io/host.ts";
import { environmentError, usageError } from "../errors.ts";
import { list } from "../common.ts";
import { labels } from "../fleet-flags.ts";
import { log, setVerbosity } from "../output.ts";
import { verbosityArgs } from "../common.ts";
import { openQueue, queueArgs } from "../queue-option.ts";

function whole(name: string, raw: unknown, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max)
    throw usageError(`--${name} must be a whole number from ${min} to ${max}, got "${String(raw)}"`);
  return n;
}

/** The agents installed on this box: those whose binary `doctor` finds (an agent named per run, acp, never). */
const installed = (): string[] =>
  adapters()
    .filter((a) => AGENT_TRAITS[a.name].namedBinary && resolveBin(a.bin.command, undefined, a.bin.env).ok)
    .map((a) => a.name);

function namedAgents(raw: unknown): string[] | undefined {
  const named = list(raw);
  const unknown = named?.find((a) => !(AGENT_NAMES as readonly string[]).includes(a));
  if (unknown !== undefined) throw usageError(`--agents: no agent "${unknown}" (one of ${AGENT_NAMES.join(", ")})`);
  return named;
}

/** The agents this worker offers: --agents (each must be installed), else every installed one. */
function offeredAgents(named: string[] | undefined): string[] {
  const here = installed();
  const missing = named?.find((a) => !here.includes(a));
  if (missing !== undefined)
    throw environmentError(`--agents: ${missing} is not installed on this box: agentport doctor ${missing} says why`);
  const offered = named ?? here;
  if (offered.length === 0) throw environmentError("no agent is installed on this box: agentport doctor says why");
  return offered;
}

export const workerCommand = defineCommand({
  meta: {
    name: "worker",
    description: "Run the fleet's queued tasks on this box: claim, clone, run as `run` does, store the result; Ctrl-C drains",
  },
  args: {
    concurrency: { type: "string", valueHint: "N", description: "Tasks run at a time (default 1)" },
    label: {
      type: "string",
      valueHint: "L",
      description: "A label this worker offers (repeatable): it claims a task only when it has every label the task --requires",
    },
    agents: {
      type: "string",
      valueHint: "a,b",
      description: "The agents it offers (default: every agent installed here, as `doctor` finds its binary)",
    },
    once: { type: "boolean", description: "Claim at most one task, run it, exit" },
    "drain-timeout": {
      type: "string",
      valueHint: "S",
      description: "On Ctrl-C / SIGTERM, how long running tasks may finish before they are stopped (default 60)",
    },
    ...queueArgs,
    ...verbosityArgs,
  },
  async run({ args, rawArgs }) {
    setVerbosity(args);
    const concurrency = whole("concurrency", args.concurrency, 1, 1, 64);
    const drainMs = whole("drain-timeout", args["drain-timeout"], 60, 0, 86_400) * 1000;
    const offeredLabels = labels(rawArgs, "label");
    const named = namedAgents(args.agents);
    // Hidden, for tests: a short lease.
    const leaseMs = whole("AGENTPORT_LEASE_MS", process.env.AGENTPORT_LEASE_MS, LEASE_MS, 500, 3_600_000);
    const { home, url, queue } = await openQueue(args);
    try {
      const host = thisHost(home);
      const agents = offeredAgents(named);
      const offer = { hostname: host.hostname, machineId: host.machineId, labels: offeredLabels, agents };
      const worker = new Worker({
        queue,
        ledger: url,
        home,
        offer,
        concurrency,
        once: Boolean(args.once),
        leaseMs,
        drainMs,
        say: (line) => log.info(line),
      });
      const drain = () => worker.drain();
      process.on("SIGTERM", drain);
      process.on("SIGINT", drain);
      log.info(
        `worker ${worker.id}: ${concurrency} at a time; agents ${agents.join(", ")}${offeredLabels.length === 0 ? "" : `; labels ${offeredLabels.join(", ")}`}`,
      );
      try {
        await worker.run();
      } finally {
        process.off("SIGTERM", drain);
        process.off("SIGINT", drain);
      }
    } finally {
      await queue.close();
    }
    return 0;
  },
});
