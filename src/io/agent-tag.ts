// Proof that a process is this agentport's before anything signals it: a
// ledger row (imported, or written by anyone who can write a shared ledger)
// may name any pid of this host. Every agent carries AGENTPORT_AGENT, naming
// the agentport that started it (`pid@boot:start`, the phase's runner
// columns); a runner must run agentport's own program. Linux reads /proc;
// elsewhere the recorded start times are all the proof there is (null: cannot tell).
import { readFileSync, readlinkSync } from "node:fs";
import { groupMembers, HAS_PROC } from "./proc.ts";
import { runnerIdentity, type RunnerIdentity } from "./proc-identity.ts";

export const AGENT_TAG = "AGENTPORT_AGENT";

let own: string | undefined;

/** The tag a runner's agents carry in their environment. */
export function agentTag(runner: Pick<RunnerIdentity, "pid" | "start"> = runnerIdentity()): string {
  if (runner.pid === process.pid && own !== undefined) return own;
  const tag = `${runner.pid}@${runner.start}`;
  if (runner.pid === process.pid) own = tag;
  return tag;
}

/** Whether `pid` was started with AGENTPORT_AGENT=tag in its environment; null without /proc. */
export function carriesTag(pid: number, tag: string): boolean | null {
  if (!HAS_PROC) return null;
  try {
    return readFileSync(`/proc/${pid}/environ`, "latin1").split("\0").includes(`${AGENT_TAG}=${tag}`);
  } catch {
    return false;
  }
}

/** Whether any live process of group `pgid` carries the tag; null without /proc. */
export function groupCarriesTag(pgid: number, tag: string): boolean | null {
  if (!HAS_PROC) return null;
  return groupMembers(pgid).some((pid) => carriesTag(pid, tag) === true);
}

const program = (pid: number | "self"): string | null => {
  try {
    return readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, "");
  } catch {
    return null;
  }
};

/** Whether `pid` runs the same program as this agentport; null without /proc. */
export function runsAgentport(pid: number): boolean | null {
  if (!HAS_PROC) return null;
  const theirs = program(pid);
  return theirs !== null && theirs === program("self");
}
