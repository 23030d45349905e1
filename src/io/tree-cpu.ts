// Whether an agent's process tree is at work: the CPU time of the agent and
// everything it grew, compared with the last look. A tool call that runs a
// silent test suite burns CPU; one waiting on nothing does not.
import { cpuTicks, listProcesses, reach, treeOf, type ProcessRef } from "./proc.ts";

// A look reads /proc for every process: not more often than this.
const SAMPLE_MS = 500;

/** A `busy()` for the supervisor's watch: true when the tree used CPU between the last two looks. */
export function treeBusy(leader: ProcessRef): () => boolean {
  let lastAt = 0;
  let lastTicks = -1;
  let busy = false;
  return () => {
    const now = performance.now();
    if (now - lastAt < SAMPLE_MS) return busy;
    lastAt = now;
    const procs = listProcesses();
    const { roots, groups } = reach(leader, [], procs);
    const ticks = treeOf(roots, groups, procs).reduce((sum, p) => sum + cpuTicks(p.pid), 0);
    busy = lastTicks >= 0 && ticks > lastTicks;
    lastTicks = ticks;
    return busy;
  };
}
