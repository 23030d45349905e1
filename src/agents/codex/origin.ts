// Where a codex thread was born, when the ledger does not know it: its rollout
// file `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`,
// whose first record (session_meta) carries the cwd.
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { headLines, parse, type FoundSession } from "../origin.ts";

const ROLLOUT = /^rollout-.*-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl$/i;
// A rollout tree is YYYY/MM/DD: no deeper.
const MAX_DEPTH = 3;

export function codexHome(env: Record<string, string | undefined> = process.env): string {
  return env.CODEX_HOME || join(env.HOME || homedir(), ".codex");
}

export function findCodexSession(home: string, idOrPrefix: string): FoundSession[] {
  const found: FoundSession[] = [];
  const walk = (dir: string, depth: number): void => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.isDirectory() && depth < MAX_DEPTH) walk(join(dir, entry.name), depth + 1);
      const id = ROLLOUT.exec(entry.name)?.[1];
      if (!entry.isFile() || id === undefined || !id.startsWith(idOrPrefix)) continue;
      const file = join(dir, entry.name);
      const meta = parse(headLines(file)[0]);
      const payload = meta?.type === "session_meta" ? (meta.payload as Record<string, unknown> | undefined) : undefined;
      if (typeof payload?.cwd === "string") found.push({ agent: "codex", id, cwd: payload.cwd, sessionFile: file });
    }
  };
  walk(join(home, "sessions"), 0);
  return found;
}
