// Where a session was born, when the ledger does not know it: pi's session
// file header (`*_<id>.jsonl`, line 1: {type:"session", id, cwd}), or claude's
// per-project transcript (`<config>/projects/<mangled cwd>/<id>.jsonl`, whose
// records carry the cwd).
import { existsSync, openSync, readSync, closeSync, readdirSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import type { AgentName } from "../io/ledger.ts";

export interface FoundSession {
  agent: AgentName;
  id: string;
  cwd: string;
  sessionFile: string | null;
}

const HEAD_BYTES = 64 * 1024;

/** The first lines of a file, bounded: a transcript can be huge. */
export function headLines(path: string): string[] {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const n = readSync(fd, buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, n).toString("utf8").split("\n").slice(0, -1);
  } finally {
    closeSync(fd);
  }
}

export function parse(line: string | undefined): Record<string, unknown> | null {
  if (!line) return null;
  try {
    const value = JSON.parse(line);
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A session file whose header cannot be believed: one line naming the file. */
export class SessionFileError extends Error {
  override readonly name = "SessionFileError";
}

/**
 * The header of a pi session file (line 1: {type:"session", id, cwd}), or
 * null when the file is not one. A cwd that is not absolute is an error: pi
 * would resolve it against wherever it was started.
 */
export function piSessionHeader(file: string): { id: string; cwd: string } | null {
  const header = parse(headLines(file)[0]);
  if (header?.type !== "session" || typeof header.cwd !== "string" || typeof header.id !== "string") return null;
  if (!isAbsolute(header.cwd)) throw new SessionFileError(`${file}: the session header's cwd "${header.cwd.slice(0, 200)}" is not an absolute folder; the file was edited or is damaged`);
  return { id: header.id, cwd: header.cwd };
}

export function findPiSession(sessionDirs: string[], idOrPrefix: string): FoundSession[] {
  const found = new Map<string, FoundSession>();
  for (const dir of sessionDirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      const match = /_([0-9a-fA-F-]{8,})\.jsonl$/.exec(name);
      if (!match?.[1]?.startsWith(idOrPrefix)) continue;
      const file = join(dir, name);
      const header = piSessionHeader(file);
      if (header !== null) found.set(header.id, { agent: "pi", id: header.id, cwd: header.cwd, sessionFile: file });
    }
  }
  return [...found.values()];
}

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
      const cwd = headLines(join(dir, name)).map(parse).find((r) => typeof r?.cwd === "string")?.cwd;
      if (typeof cwd !== "string") continue;
      if (!isAbsolute(cwd)) throw new SessionFileError(`${join(dir, name)}: the transcript's cwd "${cwd.slice(0, 200)}" is not an absolute folder; the file was edited or is damaged`);
      found.push({ agent: "claude", id: name.slice(0, -6), cwd, sessionFile: null });
    }
  }
  return found;
}
