// `agentport cancel ID`: stop a running session. Its runner (the pid in the
// ledger) is asked to stop: it kills the agent's group and records `aborted`,
// "cancelled by agentport cancel". A runner that is gone cannot: its agent's
// recorded group is killed here, and the phase finished as `interrupted`.
import { defineCommand } from "citty";
import { AgentportError, usageError } from "../errors.ts";
import { agentTag, groupCarriesTag, runsAgentport } from "../../io/agent-tag.ts";
import { ledgerCommandArgs } from "../ledger-option.ts";
import { log, setVerbosity, writeResult } from "../output.ts";
import { openNamedSession, SESSION_ID_ARG } from "../session-arg.ts";
import { CANCEL_SIGNAL } from "../interrupt.ts";
import { phaseRunner, runnerOf, tidyLedger } from "../../io/reap.ts";
import { groupAlive, signalGroup } from "../../io/proc.ts";
import { agentGroupAlive } from "../../io/proc-identity.ts";
import type { Ledger, PhaseRow } from "../../io/ledger.ts";
import { printable } from "../../core/text.ts";
import { hostname } from "node:os";
import { projectLedger } from "../agent-options.ts";
import { cancelTask } from "./cancel-task.ts";

/** How long the runner gets to record its verdict. */
const WAIT_MS = 30_000;

async function openPhase(ledger: Ledger, sessionId: string): Promise<PhaseRow | undefined> {
  return (await ledger.runningPhases()).find((p) => p.session_id === sessionId);
}

/**
 * Why the process a phase names may not be signalled, or null when it is
 * proven agentport's: a runner must be the recorded process and run
 * agentport's program; an agent group must hold the recorded leader (or what
 * is left of its group) carrying the tag of the phase's runner. A row may come
 * from an import or from anyone who can write a shared ledger.
 */
function unproven(phase: PhaseRow, target: "runner" | "agent"): string | null {
  const runner = runnerOf(phase);
  if (runner === null) return "it names no agentport that runs it (an imported row never does)";
  if (target === "runner") return runsAgentport(runner.pid) === false ? `pid ${runner.pid} does not run agentport` : null;
  if (phase.agent_pgid === null || !agentGroupAlive(phase.agent_pgid, phase.agent_start)) return "its agent is gone";
  const tagged = groupCarriesTag(phase.agent_pgid, agentTag(runner));
  return tagged === false ? `process group ${phase.agent_pgid} was not started by agentport (pid ${runner.pid})` : null;
}

/** Refused: a process agentport cannot prove its own is never signalled (exit 3). */
function refuse(session: string, phase: PhaseRow, why: string): never {
  throw new AgentportError("refused", `refused: session ${session}: phase ${phase.seq} is open but ${why}; nothing was signalled`);
}

/** Kill the recorded agent group of a phase whose runner is gone, when it is still alive here and proven agentport's; whether there was one. */
function killOrphan(session: string, phase: PhaseRow): boolean {
  if (phase.agent_pgid === null || phase.runner_host !== hostname() || !agentGroupAlive(phase.agent_pgid, phase.agent_start)) return false;
  const why = unproven(phase, "agent");
  if (why !== null) {
    // The keeper may be ending that group this moment (its leader a zombie): a group with no live process left is gone, not refused.
    if (!groupAlive(phase.agent_pgid)) return false;
    refuse(session, phase, why);
  }
  log.info(`agentport (pid ${phase.runner_pid}) is gone: killing the agent's process group ${phase.agent_pgid}`);
  signalGroup(phase.agent_pgid, "SIGKILL");
  return true;
}

export const cancelCommand = defineCommand({
  meta: {
    name: "cancel",
    description:
      "Stop a running session: its agentport ends the agent and records aborted; a gone agentport's agent is killed here and the phase finished as interrupted. A fleet task's id: cancelled through the queue",
  },
  args: {
    id: SESSION_ID_ARG,
    json: { type: "boolean", description: "One JSON object: {session_id, was_running, phase, status}" },
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const asTask = await cancelTask(await projectLedger(args), String(args.id), Boolean(args.json));
    if (asTask !== null) return asTask;
    /** What cancel did, in words or as one JSON object. */
    const said = (wasRunning: boolean, phase: PhaseRow | undefined, status: string | null, words: string) =>
      writeResult(
        args.json ? JSON.stringify({ session_id: session.id, was_running: wasRunning, phase: phase?.seq ?? null, status }) : words,
      );
    await using opened = await openNamedSession(args, args.id);
    const { ledger, session, choice } = opened;
    const phase = await openPhase(ledger, session.id);
    if (phase === undefined) {
      // Opening the ledger may just have finished a gone runner's phase as interrupted: its agent may still be alive.
      const last = (await ledger.phases(session.id)).at(-1);
      if (last !== undefined && killOrphan(session.id, last)) {
        await said(true, last, last.status, `session ${session.id} stopped: phase ${last.seq} ${last.status}`);
        return 0;
      }
      await said(false, last, last?.status ?? null, `session ${session.id} is not running (its last phase: ${last?.status ?? "none"})`);
      return 0;
    }
    const runner = phaseRunner(phase);
    if (runner === "elsewhere")
      throw usageError(`session ${session.id} runs on host ${printable(phase.runner_host ?? "?")}: cancel it there`);
    if (runner === "unknown") refuse(session.id, phase, unproven(phase, "runner") ?? "it names no agentport that runs it");
    if (runner === "alive" && phase.runner_pid !== null) {
      const why = unproven(phase, "runner");
      if (why !== null) refuse(session.id, phase, why);
      process.kill(phase.runner_pid, CANCEL_SIGNAL);
      const end = performance.now() + WAIT_MS;
      while ((await openPhase(ledger, session.id))?.id === phase.id) {
        if (performance.now() > end)
          throw usageError(`session ${session.id}: agentport (pid ${phase.runner_pid}) did not stop within ${WAIT_MS / 1000} s`);
        await Bun.sleep(100);
      }
    } else {
      // Nobody left to ask: end what is left of the agent, then finish the phase as the reaper does.
      killOrphan(session.id, phase);
      await tidyLedger(ledger, choice.home);
    }
    const finished = (await ledger.phases(session.id)).find((p) => p.id === phase.id);
    await said(
      true,
      phase,
      finished?.status ?? null,
      `session ${session.id} stopped: phase ${phase.seq} ${finished?.status ?? "finished"}`,
    );
    return 0;
  },
});
