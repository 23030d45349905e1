// Processes: whether one still runs and when it started, and the tree an
// agent grew — its group and every descendant, including those that made
// their own group or session — to signal or end. Linux reads /proc; elsewhere
// `ps` answers. Whether it is still the same process: proc-identity.ts.
import { readdirSync, readFileSync } from "node:fs";

export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  /** When it started, as the system counts it: with the pid, it names one process. */
  start: string;
}

/** Whether this system has Linux's /proc (else `ps` answers). */
export const HAS_PROC = (() => {
  try {
    readFileSync("/proc/self/stat");
    return true;
  } catch {
    return false;
  }
})();

/** `/proc/<pid>/stat`, split after the command (which may hold spaces and parentheses). */
function statFields(pid: number | "self"): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return null;
  }
}

// After the command: 0 state, 1 ppid, 2 pgrp, ... 19 starttime (field 22 of proc(5)).
const toInfo = (pid: number, f: string[]): ProcInfo => ({ pid, ppid: Number(f[1]), pgid: Number(f[2]), start: f[19] ?? "" });

/** One living process as /proc sees it (null: gone, a zombie, or no /proc). */
export function procInfo(pid: number): ProcInfo | null {
  const f = statFields(pid);
  return f === null || f[0] === "Z" || f[0] === "X" ? null : toInfo(pid, f);
}

/** The pids `pid`'s threads forked and that still run (Linux: /proc/PID/task/TID/children; [] elsewhere or when gone). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      for (const c of readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").split(" ")) if (c !== "") out.push(Number(c));
    }
  } catch {
    // gone meanwhile
  }
  return out;
}

function psLines(args: string[]): string[] {
  try {
    const out = Bun.spawnSync(["ps", ...args], { stdin: "ignore", stdout: "pipe", stderr: "ignore" });
    return out.stdout
      .toString()
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean);
  } catch {
    return [];
  }
}

/** Every process of the system (zombies left out): the snapshot a tree is cut from. */
export function listProcesses(): ProcInfo[] {
  if (!HAS_PROC) {
    return psLines(["-A", "-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "state="])
      .map((l) => l.split(/\s+/))
      .filter((f) => !(f[3] ?? "").startsWith("Z"))
      .map((f) => ({ pid: Number(f[0]), ppid: Number(f[1]), pgid: Number(f[2]), start: "" }));
  }
  const all: ProcInfo[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const p = procInfo(pid);
    if (p !== null) all.push(p);
  }
  return all;
}

/**
 * The members of `groups` and every descendant of them or of `roots`: what
 * must die with an agent. A grandchild that called setsid() is still a
 * descendant while its parent lives, so the walk finds it.
 */
export function treeOf(roots: Iterable<number>, groups: Iterable<number>, procs: ProcInfo[] = listProcesses()): ProcInfo[] {
  const groupSet = new Set(groups);
  const children = new Map<number, ProcInfo[]>();
  for (const p of procs) {
    const list = children.get(p.ppid);
    if (list === undefined) children.set(p.ppid, [p]);
    else list.push(p);
  }
  const rootSet = new Set(roots);
  const found = new Map<number, ProcInfo>();
  // A root that is a zombie is not listed, but its children still name it as their parent.
  const queue: number[] = [...rootSet];
  for (const p of procs) {
    if (groupSet.has(p.pgid) || rootSet.has(p.pid)) {
      found.set(p.pid, p);
      queue.push(p.pid);
    }
  }
  while (queue.length > 0) {
    const pid = queue.pop()!;
    for (const child of children.get(pid) ?? []) {
      if (found.has(child.pid) || child.pid === process.pid) continue;
      found.set(child.pid, child);
      queue.push(child.pid);
    }
  }
  found.delete(process.pid);
  return [...found.values()];
}

/** CPU time `pid` and the children it waited for used, in clock ticks (utime + stime + cutime + cstime); 0 when unknown. */
export function cpuTicks(pid: number): number {
  const f = statFields(pid);
  if (f === null) return 0;
  return [11, 12, 13, 14].reduce((sum, i) => sum + (Number(f[i]) || 0), 0);
}

/** Signal one process; one already gone is no error. */
export function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH
  }
}

/** Whether a process (`-pgid`: a group member) of this number exists, zombies too. */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code !== "ESRCH";
  }
}

/** The live processes of group `pgid` (Linux; elsewhere empty). */
export function groupMembers(pgid: number): number[] {
  return HAS_PROC
    ? listProcesses()
        .filter((p) => p.pgid === pgid)
        .map((p) => p.pid)
    : [];
}

/** Whether any process of group `pgid` still runs (zombies, dead but not yet reaped, do not count). */
export function groupAlive(pgid: number): boolean {
  if (HAS_PROC) return listProcesses().some((p) => p.pgid === pgid);
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Signal a whole process group; a group already gone is no error. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  signalPid(-pgid, signal);
}

/** A process as it was when first seen: its pid names it only while its start time matches. */
export type ProcessRef = Pick<ProcInfo, "pid" | "start">;

/**
 * The roots and groups to walk for `leader`: itself and its group while it is
 * the process we started; a pid taken over by a stranger is left alone (its
 * group, had our agent's survived, would have kept the number from reuse).
 */
export function reach(leader: ProcessRef, also: ProcessRef[], procs: ProcInfo[]): { roots: number[]; groups: number[] } {
  const byPid = new Map(procs.map((p) => [p.pid, p]));
  // An unknown start time (no /proc) cannot tell: the pid is taken at its word.
  const matches = (here: ProcInfo, ref: ProcessRef) => here.start === "" || ref.start === "" || here.start === ref.start;
  const same = (ref: ProcessRef) => {
    const here = byPid.get(ref.pid);
    return here !== undefined && matches(here, ref);
  };
  const leaderHere = byPid.get(leader.pid);
  const taken = leaderHere !== undefined && !matches(leaderHere, leader);
  return {
    roots: [...(taken ? [] : [leader.pid]), ...also.filter(same).map((p) => p.pid)],
    groups: taken ? [] : [leader.pid],
  };
}

/** Send `signal` to a group and to every process it grew (TERM, asking them to end). */
export function signalTree(leader: ProcessRef, signal: NodeJS.Signals, also: ProcessRef[] = []): ProcInfo[] {
  const procs = listProcesses();
  const { roots, groups } = reach(leader, also, procs);
  const tree = treeOf(roots, groups, procs);
  for (const g of groups) signalGroup(g, signal);
  for (const p of tree) signalPid(p.pid, signal);
  return tree;
}

/**
 * Kill a group and everything it grew, however it regrouped: stop them all
 * first (a stopped process forks no more), look again until nothing new
 * appears, then KILL. `also` are processes seen earlier (an orphan whose
 * parent is gone is no one's descendant any more), killed if still the same.
 * Returns how many processes were found.
 */
export function killTree(leader: ProcessRef, also: ProcessRef[] = []): number {
  // The leader reaped and its group empty: what it grew was handed to init and is no one's descendant
  // any more, so a look at every process (ms of /proc reads at every agent's end) would find nothing.
  if (also.length === 0 && !exists(leader.pid) && !exists(-leader.pid)) return 0;
  const seen = new Map<number, ProcInfo>();
  let groups: number[] = [];
  for (let round = 0; round < 5; round++) {
    const procs = listProcesses();
    const reached = reach(leader, [...also, ...seen.values()], procs);
    groups = round === 0 ? reached.groups : groups;
    const fresh = treeOf(reached.roots, groups, procs).filter((p) => !seen.has(p.pid));
    if (fresh.length === 0) break;
    for (const p of fresh) {
      seen.set(p.pid, p);
      signalPid(p.pid, "SIGSTOP");
    }
  }
  for (const g of groups) signalGroup(g, "SIGKILL");
  for (const p of seen.values()) signalPid(p.pid, "SIGKILL");
  return seen.size;
}

/** When `pid` started (Linux: clock ticks since boot; elsewhere ps's start time), null when it is gone. */
export function processStart(pid: number): string | null {
  if (HAS_PROC) return statFields(pid)?.[19] ?? null;
  return psLines(["-o", "lstart=", "-p", String(pid)])[0] ?? null;
}

// Whether a process still runs. A zombie (dead, not yet reaped by its new
// parent) counts as gone: it holds no resources and runs no code.
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  if (!HAS_PROC) return true; // kill(0) said it exists
  const f = statFields(pid);
  return f !== null && f[0] !== "Z" && f[0] !== "X";
}

/** Wait up to `ms` for `pid` to be gone; true when it is. */
export async function waitGone(pid: number, ms: number): Promise<boolean> {
  const until = performance.now() + ms;
  while (isRunning(pid)) {
    if (performance.now() > until) return false;
    await Bun.sleep(20);
  }
  return true;
}
