// Where agentport keeps its state: the ledger and one folder per run.
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { mkdirSync } from "node:fs";
import { ownFolder } from "./own-path.ts";

/** `--home`, else $AGENTPORT_HOME, else $XDG_STATE_HOME/agentport, else ~/.local/state/agentport. */
export function stateHome(flag?: string, env: Record<string, string | undefined> = process.env): string {
  if (flag) return resolve(flag);
  if (env.AGENTPORT_HOME) return resolve(env.AGENTPORT_HOME);
  if (env.XDG_STATE_HOME) return join(resolve(env.XDG_STATE_HOME), "agentport");
  return join(homedir(), ".local", "state", "agentport");
}

/** A new folder for one run (a phase, a batch), never one another run has: a second run in the same second gets `-2`, then `-3`. */
export function makeRunDir(home: string, sessionId: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  const runs = ownFolder(join(home, "runs"));
  for (let n = 1; ; n++) {
    const dir = join(runs, `${stamp}-${sessionId.slice(0, 8)}${n === 1 ? "" : `-${n}`}`);
    try {
      mkdirSync(dir, { mode: 0o700 });
      return dir;
    } catch (error) {
      if ((error as { code?: string }).code !== "EEXIST") throw error;
    }
  }
}

/** The state folder a run folder of makeRunDir belongs to. */
export function homeOfRunDir(runDir: string): string {
  return dirname(dirname(runDir));
}

/** Where a ledger at `where` (a file path, or a server URL) keeps its local side files (locks): its folder, else the temp folder. */
export function localStateOf(where: string): string {
  return isAbsolute(where) ? dirname(where) : join(tmpdir(), `agentport-${process.getuid?.() ?? "user"}`);
}
