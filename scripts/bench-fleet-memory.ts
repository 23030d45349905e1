// What a worker costs a box in memory: the private memory (smaps_rollup
// `Anonymous`) of the worker and every agentport under it — an `agentport
// run` per attempt when the worker spawns one, and the keepers — sampled
// from /proc. The agents themselves (the fake claude, started through a
// symlink of another name) are not counted: they are the work, not the cost.
import { readdirSync, readFileSync } from "node:fs";

function stat(pid: number): { ppid: number } | null {
  try {
    return { ppid: Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]) };
  } catch {
    return null;
  }
}

function argv0(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[0] ?? "";
  } catch {
    return "";
  }
}

function anonKB(pid: number): number {
  try {
    return Number(/Anonymous:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** `root` and its descendants whose argv[0] is `bin` (agentport itself, not an agent started under another name). */
export function agentportTree(root: number, bin: string): number[] {
  const parent = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s !== null) parent.set(pid, s.ppid);
  }
  const under = (pid: number): boolean => {
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parent.get(p)) if (p === root) return true;
    return false;
  };
  return [...parent.keys()].filter((pid) => pid === root || (under(pid) && argv0(pid) === bin));
}

/** Private MiB of a worker and the agentport processes under it, now. */
export const workerMiB = (pid: number, bin: string): number => agentportTree(pid, bin).reduce((sum, p) => sum + anonKB(p), 0) / 1024;

/** Sample `pids` every `everyMs` until stopped: the peak of their summed private MiB, and its median over busy samples. */
export function sampleWorkers(pids: number[], bin: string, everyMs = 500): { stop: () => { peakMiB: number; medianMiB: number } } {
  const sums: number[] = [];
  const timer = setInterval(() => sums.push(pids.reduce((sum, pid) => sum + workerMiB(pid, bin), 0)), everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      const sorted = [...sums].sort((a, b) => a - b);
      return { peakMiB: sorted.at(-1) ?? 0, medianMiB: sorted[Math.floor(sorted.length / 2)] ?? 0 };
    },
  };
}
