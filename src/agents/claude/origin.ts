// Where a claude session was born, when the ledger does not know it: its
// per-project transcript (`<config>/projects/<mangled cwd>/<id>.jsonl`, whose
// records carry the cwd).
import { existsSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { headLines, parse, SessionFileError, type FoundSession } from "../origin.ts";

export function claudeConfigDir(env: Record<string, string | undefined> = process.env): string {
  return env.CLAUDE_CONFIG_DIR || join(env.HOME || homedir(), ".claude");
}

export function findClaudeSession(configDir: string, idOrPrefix: string): FoundSession[] {
  const projects = join(configDir, "projects");
  if (!existsSync(projects)) return [];
  const found: FoundSession[] = [];
  for (const project of readdirSync(projects)) {
    const dir = join(projects, project);
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.endsWith(".jsonl") || !name.startsWith(idOrPrefix)) continue;
      const cwd = headLines(join(dir, name))
        .map(parse)
        .find((r) => typeof r?.cwd === "string")?.cwd;
      if (typeof cwd !== "string") continue;
      if (!isAbsolute(cwd))
        throw new SessionFileError(
          `${join(dir, name)}: the transcript's cwd "${cwd.slice(0, 200)}" is not an absolute folder; the file was edited or is damaged`,
        );
      found.push({ agent: "claude", id: name.slice(0, -6), cwd, sessionFile: null });
    }
  }
  return found;
}
