// What every command that opens the ledger does first: finish what runners
// that are gone left open. A finish kept aside when the disk was full is
// recorded as it was; any other phase whose agentport is gone (killed, its
// machine rebooted) is finished as `interrupted`, with when that was noticed.
// Phases run on another host (a shared ledger) are left to that host.
import { endedUncounted, type Ledger, type PhaseRow } from "./ledger.ts";
import { hostname } from "node:os";
import { agentGroupAlive, runnerState, type RunnerIdentity, type RunnerState } from "./proc-identity.ts";
import { commitKept, dropReservation, hasKept } from "./unrecorded.ts";
import { agentTag, groupCarriesTag } from "./agent-tag.ts";

export interface Tidied {
  /** Finishes kept aside (a full disk) and recorded now. */
  recorded: number;
  /** Phases whose runner was gone: finished as interrupted. */
  interrupted: number;
}

/** The runner a phase names, if it names one. */
export function runnerOf(phase: PhaseRow): RunnerIdentity | null {
  if (phase.runner_pid === null || phase.runner_start === null || phase.runner_host === null) return null;
  return { pid: phase.runner_pid, start: phase.runner_start, host: phase.runner_host };
}

/** Whether the agentport that runs `phase` is still at it (`elsewhere`: another host's, not ours to tell). */
export function phaseRunner(phase: PhaseRow): RunnerState | "unknown" {
  const runner = runnerOf(phase);
  return runner === null ? "unknown" : runnerState(runner);
}

/** Whether tidyLedger has anything to do: a kept finish, or an open phase whose runner is gone (asked of a read-only ledger). */
export async function needsTidy(ledger: Ledger, home: string): Promise<boolean> {
  try {
    if (hasKept(home)) return true;
    return (await ledger.runningPhases()).some((p) => phaseRunner(p) === "gone");
  } catch {
    return false;
  }
}

/** Best effort: a ledger that cannot be written now (read-only, still full) is tidied by a later command. */
export async function tidyLedger(ledger: Ledger, home: string): Promise<Tidied> {
  const tidied: Tidied = { recorded: 0, interrupted: 0 };
  try {
    tidied.recorded = await commitKept(home, ledger);
    for (const phase of await ledger.runningPhases()) {
      if (phaseRunner(phase) !== "gone") continue;
      const noticed = new Date().toISOString();
      const seconds = Math.max(0, (Date.parse(noticed) - Date.parse(phase.started_at)) / 1000);
      try {
        await ledger.finishPhase(
          phase.id,
          endedUncounted(
            "interrupted",
            `interrupted: agentport (pid ${phase.runner_pid}) was gone before the phase finished; noticed ${noticed}, ${Math.round(seconds)} s after it started`,
            null,
            {
              interrupted_noticed_at: noticed,
              runner_pid: phase.runner_pid ?? 0,
              ...(phase.agent_pgid === null ? {} : { agent_pgid: phase.agent_pgid }),
            },
          ),
        );
        dropReservation(home, phase);
        tidied.interrupted++;
      } catch {
        // finished meanwhile by another command: nothing to do
      }
    }
  } catch {
    // the next command tries again
  }
  return tidied;
}

export type Busy = PhaseRow & { state: "alive" | "elsewhere" | "orphaned" };

/**
 * The phase of `sessionId` whose agent may still be at work, if any: one a
 * live agentport runs (here, or on another host), or — its agentport and
 * keeper both gone — one whose agent's process group still lives here.
 */
export async function stillRunning(ledger: Ledger, sessionId: string): Promise<Busy | null> {
  for (const phase of await ledger.runningPhases()) {
    if (phase.session_id !== sessionId) continue;
    const state = phaseRunner(phase);
    if (state === "alive" || state === "elsewhere") return { ...phase, state };
  }
  const last = (await ledger.phases(sessionId)).findLast((p) => p.agent_pgid !== null);
  if (last === undefined || last.runner_host !== hostname()) return null;
  // A group that does not carry its runner's tag is no agent of agentport's (agent-tag.ts): none to wait for, none to name.
  const runner = runnerOf(last);
  if (runner === null || groupCarriesTag(last.agent_pgid!, agentTag(runner)) === false) return null;
  // Right after agentport was killed its keeper may still be ending the group: give it a moment.
  return (await groupGone(last.agent_pgid!, last.agent_start, ORPHAN_WAIT_MS)) ? null : { ...last, state: "orphaned" };
}

const ORPHAN_WAIT_MS = 5_000;

async function groupGone(pgid: number, start: string | null, waitMs: number): Promise<boolean> {
  const until = Date.now() + waitMs;
  while (agentGroupAlive(pgid, start)) {
    if (Date.now() >= until) return false;
    await Bun.sleep(100);
  }
  return true;
}
