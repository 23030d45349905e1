// Who runs a phase, as the ledger records it: a process named by this boot,
// its start time and the host, so a later reader can tell whether that very
// process, or the agent's group, still lives (a pid alone may have been reused).
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import { groupAlive, isRunning, processStart } from "./proc.ts";

/** This boot of this machine: a pid and start time name one process only within it. */
export function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
  } catch {
    return "";
  }
}

/** Who runs a phase: enough to tell later whether that very process still lives. */
export interface RunnerIdentity {
  pid: number;
  /** The boot and the start time, `boot:start`. */
  start: string;
  host: string;
}

export function runnerIdentity(pid: number = process.pid): RunnerIdentity {
  return { pid, start: `${bootId()}:${processStart(pid) ?? ""}`, host: hostname() };
}

/** An agent's process group as the ledger records it: the leader's pid (= the group id) and its `boot:start` time. */
export interface AgentGroup {
  pgid: number;
  start: string;
}

/** The group an agent just spawned as its leader leads. */
export function agentGroupOf(pid: number): AgentGroup {
  return { pgid: pid, start: runnerIdentity(pid).start };
}

/**
 * Whether the recorded agent group still has processes here. A live leader
 * must be the recorded process (its pid may since have gone to another
 * program); a dead leader's group id cannot be reused while any member lives,
 * so then any member is the agent's. Without a recorded start, nothing is
 * taken for the agent.
 */
export function agentGroupAlive(pgid: number, start: string | null): boolean {
  if (start === null || start.endsWith(":")) return false;
  if (isRunning(pgid)) return runnerIdentity(pgid).start === start;
  return groupAlive(pgid);
}

export type RunnerState = "alive" | "gone" | "elsewhere";

/** Whether the runner a phase names still runs: `elsewhere` when it ran on another host (a shared ledger), which this one cannot tell. */
export function runnerState(runner: RunnerIdentity): RunnerState {
  if (runner.host !== hostname()) return "elsewhere";
  const [boot] = runner.start.split(":");
  if (boot !== bootId()) return "gone"; // rebooted since
  return isRunnerAlive(runner.pid, runner.start) ? "alive" : "gone";
}

/** Whether `pid` runs and is the process that started at `start` (as runnerIdentity gives it). */
export function isRunnerAlive(pid: number, start: string): boolean {
  if (!isRunning(pid)) return false;
  return runnerIdentity(pid).start === start;
}
