// Where a gemini session was born, when the ledger does not know it: gemini
// keeps sessions per project, `~/.gemini/tmp/<project>/chats/session-*.jsonl`
// (header line {sessionId, projectHash, …}), and `~/.gemini/projects.json`
// maps each project folder to its short name.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { headLines, parse, type FoundSession } from "../origin.ts";

export function geminiDir(env: Record<string, string | undefined> = process.env): string {
  return join(env.HOME || homedir(), ".gemini");
}

function projects(dir: string): [cwd: string, name: string][] {
  try {
    const parsed = JSON.parse(readFileSync(join(dir, "projects.json"), "utf8")) as { projects?: Record<string, unknown> };
    return Object.entries(parsed.projects ?? {}).filter((e): e is [string, string] => typeof e[1] === "string");
  } catch {
    return [];
  }
}

export function findGeminiSession(dir: string, idOrPrefix: string): FoundSession[] {
  const found: FoundSession[] = [];
  for (const [cwd, name] of projects(dir)) {
    const chats = join(dir, "tmp", name, "chats");
    if (!existsSync(chats)) continue;
    for (const file of readdirSync(chats)) {
      if (!file.startsWith("session-") || !file.endsWith(".jsonl")) continue;
      const header = parse(headLines(join(chats, file))[0]);
      const id = header?.sessionId;
      if (typeof id === "string" && id.startsWith(idOrPrefix)) found.push({ agent: "gemini", id, cwd, sessionFile: join(chats, file) });
    }
  }
  return found;
}
