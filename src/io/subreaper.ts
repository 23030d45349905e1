// agentport as the child subreaper of what its agents start (Linux,
// PR_SET_CHILD_SUBREAPER): a process that detached from its agent (setsid, a
// double fork, a `server &` whose shell exited) is handed to agentport instead
// of init, so it is still ours to end. The keeper cannot be the subreaper: a
// subreaper adopts only its own descendants, and the agents are agentport's
// children, not the keeper's.
//
// Adopted: a child of agentport in a group not its own that agentport did not
// start (its agents, servers and gates are named here while they run). They
// are ended when agentport's last running agent is done (TERM, KILL after the
// grace, then waited for), so a concurrent bon arm's dev server is not ended
// under it; what is left when agentport is killed is the keeper's.
import { openLibc } from "./libc.ts";
import { existsSync } from "node:fs";
import { childrenOf, listProcesses, signalPid, treeOf, type ProcInfo } from "./proc.ts";

const PR_SET_CHILD_SUBREAPER = 36;
const WNOHANG = 1;
// Linux with CONFIG_PROC_CHILDREN: agentport's own children are a few files away.
const WALKABLE = existsSync(`/proc/${process.pid}/task/${process.pid}/children`);

interface Libc {
  prctl(option: number, arg: number): number;
  waitpid(pid: number, options: number): number;
}

let libc: Libc | null | undefined;

function loadLibc(): Libc | null {
  if (libc !== undefined) return libc;
  // musl, no FFI: detached processes go to init, as without agentport.
  const lib = openLibc({
    prctl: { args: ["i32", "u64", "u64", "u64", "u64"], returns: "i32" },
    waitpid: { args: ["i32", "ptr", "i32"], returns: "i32" },
  });
  libc =
    lib === null
      ? null
      : {
          prctl: (option, arg) => lib.symbols.prctl(option, arg, 0, 0, 0),
          waitpid: (pid, options) => lib.symbols.waitpid(pid, null, options),
        };
  return libc;
}

let subreaper: boolean | undefined;

/** Become the subreaper of this process's descendants (once; false where it cannot be). */
export function becomeSubreaper(): boolean {
  if (subreaper === undefined) subreaper = loadLibc()?.prctl(PR_SET_CHILD_SUBREAPER, 1) === 0;
  return subreaper;
}

/** Children agentport started in groups of their own and still runs: never taken for adopted ones. */
const ours = new Set<number>();

export function holdChild(pid: number): void {
  ours.add(pid);
}

export function releaseChild(pid: number): void {
  ours.delete(pid);
}

/** Processes handed to agentport, and everything they grew. */
function adopted(procs: ProcInfo[], spare: ReadonlySet<number>): ProcInfo[] {
  const ownGroup = procs.find((p) => p.pid === process.pid)?.pgid ?? -1;
  const roots = procs
    .filter((p) => p.ppid === process.pid && p.pgid !== ownGroup && !ours.has(p.pid) && !spare.has(p.pid))
    .map((p) => p.pid);
  return roots.length === 0 ? [] : treeOf(roots, [], procs);
}

/**
 * When no agent of this agentport runs any more: end what was handed to it
 * (TERM, KILL after `graceMs`) and wait for its own children among them.
 * `spare`: children that are not adopted (the keeper). Returns how many were ended.
 */
export async function reapAdopted(graceMs: number, spare: ReadonlySet<number>): Promise<number> {
  if (!subreaper || ours.size > 0) return 0;
  // Most runs leave nothing: agentport's children read first, every process of the box only when one may be adopted.
  if (WALKABLE && childrenOf(process.pid).every((pid) => spare.has(pid))) return 0;
  const found = adopted(listProcesses(), spare);
  if (found.length === 0) return 0;
  for (const p of found) signalPid(p.pid, "SIGTERM");
  const pids = new Set(found.map((p) => p.pid));
  const until = Date.now() + graceMs;
  const left = () => listProcesses().filter((p) => pids.has(p.pid));
  while (left().length > 0 && Date.now() < until) await Bun.sleep(50);
  for (const p of left()) signalPid(p.pid, "SIGKILL");
  // Our children among them stay zombies until waited for.
  const c = loadLibc();
  for (const p of found)
    if (p.ppid === process.pid) for (let i = 0; i < 20 && c !== null && c.waitpid(p.pid, WNOHANG) === 0; i++) await Bun.sleep(10);
  return found.length;
}
