// Whether an agent's process tree is at work: the CPU time of the agent and
// everything it grew, and the bytes its descendants wrote, compared with the
// last look. A tool call that runs a silent test suite burns CPU; one that
// prints a slow download's progress writes; one waiting on nothing does neither.
import { readFileSync } from "node:fs";
import { cpuTicks, listProcesses, reach, treeOf, type ProcessRef } from "./proc.ts";

// A look reads /proc for every process: not more often than this.
const SAMPLE_MS = 500;

/** Bytes a process has written so far (any file, pipe or socket); 0 where /proc does not say. */
function writtenBytes(pid: number): number {
  try {
    const match = /^wchar:\s*(\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "latin1"));
    return match === null ? 0 : Number(match[1]);
  } catch {
    return 0;
  }
}

/**
 * A `busy()` for the supervisor's watch: true when, between the last two looks, the tree
 * used CPU or a descendant wrote. The agent's own writes are left out: its stream is
 * already activity, and a server's heartbeats are not work.
 */
export function treeBusy(leader: ProcessRef): () => boolean {
  let lastAt = 0;
  let last: { ticks: number; written: number } | null = null;
  let busy = false;
  return () => {
    const now = performance.now();
    if (now - lastAt < SAMPLE_MS) return busy;
    lastAt = now;
    const procs = listProcesses();
    const { roots, groups } = reach(leader, [], procs);
    const tree = treeOf(roots, groups, procs);
    const here = {
      ticks: tree.reduce((sum, p) => sum + cpuTicks(p.pid), 0),
      written: tree.reduce((sum, p) => sum + (p.pid === leader.pid ? 0 : writtenBytes(p.pid)), 0),
    };
    busy = last !== null && (here.ticks > last.ticks || here.written > last.written);
    last = here;
    return busy;
  };
}
