// Whether a process still runs. A zombie (dead, not yet reaped by its new
// parent) counts as gone: it holds no resources and runs no code.
import { readFileSync } from "node:fs";

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return true; // no /proc: kill(0) said it exists
  }
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
