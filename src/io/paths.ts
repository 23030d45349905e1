// Where agentport keeps its state: the ledger and one folder per run.
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { mkdirSync } from "node:fs";

/** `--home`, else $AGENTPORT_HOME, else $XDG_STATE_HOME/agentport, else ~/.local/state/agentport. */
export function stateHome(flag?: string, env: Record<string, string | undefined> = process.env): string {
  if (flag) return resolve(flag);
  if (env.AGENTPORT_HOME) return resolve(env.AGENTPORT_HOME);
  if (env.XDG_STATE_HOME) return join(resolve(env.XDG_STATE_HOME), "agentport");
  return join(homedir(), ".local", "state", "agentport");
}

/** A new folder for one run: its stderr file and anything else the run leaves. */
export function makeRunDir(home: string, sessionId: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, "").replace(/\..*$/, "");
  const dir = join(home, "runs", `${stamp}-${sessionId.slice(0, 8)}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
