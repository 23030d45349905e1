// Processes a run left behind outside its process group and session: gemini
// starts its shell tool detached (a session of its own), so killing gemini's
// group leaves the tool running. Every process of such a run carries a mark in
// its environment (inherited by every descendant, whatever group or session
// it moves to, and kept when it is reparented); once the run is over, every
// process still wearing the mark is killed. Linux: /proc; elsewhere nothing is
// found.
import { readdirSync, readFileSync } from "node:fs";

export const RUN_MARK = "AGENTPORT_RUN_MARK";

/** A fresh mark for one run, as the environment entry its processes get. */
export function runMark(): { name: string; value: string } {
  return { name: RUN_MARK, value: crypto.randomUUID() };
}

function wears(pid: string, needle: Uint8Array): boolean {
  let environ: Uint8Array;
  try {
    environ = readFileSync(`/proc/${pid}/environ`);
  } catch {
    return false;
  }
  // environ is NUL-separated NAME=value entries.
  outer: for (let at = 0; at + needle.length <= environ.length; at++) {
    if (at > 0 && environ[at - 1] !== 0) continue;
    for (let k = 0; k < needle.length; k++) if (environ[at + k] !== needle[k]) continue outer;
    const end = at + needle.length;
    if (end === environ.length || environ[end] === 0) return true;
  }
  return false;
}

/** SIGKILL every process (other than this one) whose environment holds the mark; their pids. */
export function killMarked(mark: { name: string; value: string }): number[] {
  const needle = new TextEncoder().encode(`${mark.name}=${mark.value}`);
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return [];
  }
  const killed: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid || !wears(entry, needle)) continue;
    try {
      process.kill(Number(entry), "SIGKILL");
      killed.push(Number(entry));
    } catch {
      // Gone already.
    }
  }
  return killed;
}
