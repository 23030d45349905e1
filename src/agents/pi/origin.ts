// Where a pi session was born, when the ledger does not know it: its session
// file's header (`*_<id>.jsonl`, line 1: {type:"session", id, cwd}).
import { existsSync, readdirSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { headLines, parse, SessionFileError, type FoundSession } from "../origin.ts";

/**
 * The header of a pi session file (line 1: {type:"session", id, cwd}), or
 * null when the file is not one. A cwd that is not absolute is an error: pi
 * would resolve it against wherever it was started.
 */
export function piSessionHeader(file: string): { id: string; cwd: string } | null {
  const header = parse(headLines(file)[0]);
  if (header?.type !== "session" || typeof header.cwd !== "string" || typeof header.id !== "string") return null;
  if (!isAbsolute(header.cwd))
    throw new SessionFileError(
      `${file}: the session header's cwd "${header.cwd.slice(0, 200)}" is not an absolute folder; the file was edited or is damaged`,
    );
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
