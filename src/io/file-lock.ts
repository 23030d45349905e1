// A lock file in the state folder, for work that one process should do while
// the others wait for its answer (the capability probe). It holds the owner's
// pid and start time, so a lock left by a killed process is taken over, not
// waited on for ever.
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { isRunnerAlive, runnerIdentity } from "./proc-identity.ts";

const POLL_MS = 50;

export class LockTimeout extends Error {
  override readonly name = "LockTimeout";
}

/** Try once to take `path`; true when this process now holds it. */
function tryTake(path: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    const me = runnerIdentity();
    writeSync(fd, `${me.pid} ${me.start}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The holder of `path` is gone (or wrote nothing we can read after a grace): the lock is free to take. */
function staleHolder(path: string): boolean {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return false; // released meanwhile: the next try takes it
  }
  const [pid, start] = text.trim().split(" ");
  if (pid === undefined || start === undefined) return false; // being written
  return !isRunnerAlive(Number(pid), start);
}

/**
 * Run `body` holding the lock `path`; meanwhile every `POLL_MS` the waiters
 * ask `ready()` whether the holder's answer is there, and take it instead.
 * Waits at most `waitMs` for a live holder.
 */
export async function underLock<T>(
  path: string,
  body: () => Promise<T>,
  opts: { ready: () => Promise<T | null>; waitMs: number; what: string },
): Promise<T> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const until = performance.now() + opts.waitMs;
  for (;;) {
    const answer = await opts.ready();
    if (answer !== null) return answer;
    if (tryTake(path)) break;
    if (staleHolder(path)) {
      try {
        unlinkSync(path);
      } catch {
        // another waiter took it over first
      }
      continue;
    }
    if (performance.now() > until)
      throw new LockTimeout(`waited ${Math.round(opts.waitMs / 1000)} s for ${opts.what} (lock ${path}): timeout`);
    await Bun.sleep(POLL_MS);
  }
  try {
    // Another holder may have finished between our look and our take.
    return (await opts.ready()) ?? (await body());
  } finally {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
}
