// Which session a run uses: pi's createSessionManager, and the 0.85 `--session-id`.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Json } from "../../core/record.ts";
import type { PiArgs } from "./args.ts";
import type { PiDialect } from "./dialect.ts";
import { Exit, PiFailure } from "./failures.ts";
import { defaultSessionDir, sessionsRoot } from "./files.ts";
import { SessionStore } from "./session-store.ts";
import { keepStdin, stdinText } from "./stdin.ts";

interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  mtime: number;
}

function listSessions(dir: string): SessionInfo[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
  } catch {
    return [];
  }
  const out: SessionInfo[] = [];
  for (const name of names) {
    const path = join(dir, name);
    try {
      const first = readFileSync(path, "utf8").split("\n")[0] ?? "";
      const header = JSON.parse(first) as Json;
      if (header.type !== "session" || typeof header.id !== "string") continue;
      out.push({ path, id: header.id, cwd: typeof header.cwd === "string" ? header.cwd : "", mtime: statSync(path).mtimeMs });
    } catch {
      // not a session file
    }
  }
  return out.sort((a, b) => b.mtime - a.mtime);
}

function listAllSessions(): SessionInfo[] {
  const root = sessionsRoot();
  let dirs: string[];
  try {
    dirs = readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => join(root, d.name));
  } catch {
    return [];
  }
  return dirs.flatMap(listSessions).sort((a, b) => b.mtime - a.mtime);
}

function resolveSessionPath(
  arg: string,
  cwd: string,
  sessionDir: string | undefined,
): { type: "path" | "local"; path: string } | { type: "global"; path: string; cwd: string } | { type: "not_found" } {
  if (arg.includes("/") || arg.includes("\\") || arg.endsWith(".jsonl")) return { type: "path", path: arg };
  const local = listSessions(sessionDir ?? defaultSessionDir(cwd)).find((s) => s.id.startsWith(arg));
  if (local) return { type: "local", path: local.path };
  const global = listAllSessions().find((s) => s.id.startsWith(arg));
  if (global) return { type: "global", path: global.path, cwd: global.cwd };
  return { type: "not_found" };
}

/** pi's createSessionManager, and the 0.85 `--session-id`. */
export async function chooseSession(args: PiArgs, dialect: PiDialect, cwd: string, sessionDir: string | undefined): Promise<SessionStore> {
  if (args.noSession) return SessionStore.inMemory(cwd, dialect === "0.85" ? args.sessionId : undefined);
  if (args.fork) {
    const found = resolveSessionPath(args.fork, cwd, sessionDir);
    if (found.type === "not_found") throw new PiFailure(`No session found matching '${args.fork}'`);
    return SessionStore.fork(found.path, cwd, sessionDir);
  }
  if (args.session) {
    if (args.sessionId !== undefined) throw new PiFailure("Error: --session-id cannot be combined with --session");
    const found = resolveSessionPath(args.session, cwd, sessionDir);
    if (found.type === "not_found") throw new PiFailure(`No session found matching '${args.session}'`);
    if (found.type !== "global") return SessionStore.open(found.path, sessionDir);
    // Found in another project's folder of the default tree: pi asks on stdin.
    process.stderr.write(`Session found in different project: ${found.cwd}\nFork this session into current directory? [y/N] `);
    const text = await stdinText();
    if (text === "") throw new Exit(0); // EOF: pi exits 0 silently, the prompt never runs
    const newline = text.indexOf("\n");
    const answer = (newline === -1 ? text : text.slice(0, newline)).trim().toLowerCase();
    keepStdin(newline === -1 ? "" : text.slice(newline + 1));
    if (answer !== "y" && answer !== "yes") {
      process.stderr.write("Aborted.\n");
      throw new Exit(0);
    }
    return SessionStore.fork(found.path, cwd, sessionDir);
  }
  if (dialect === "0.85" && args.sessionId !== undefined) {
    // The seed's pi: the id names the session; one with that id *and this cwd* in the session dir is continued.
    const dir = sessionDir ?? defaultSessionDir(cwd);
    const match = listSessions(dir).find((s) => s.id === args.sessionId && s.cwd === cwd);
    if (match) return SessionStore.open(match.path, dir, cwd);
    process.stderr.write(`Warning: no session ${args.sessionId} for this folder in ${dir}; creating it\n`);
    return SessionStore.create(cwd, dir, args.sessionId);
  }
  if (args.resume) {
    process.stderr.write("No session selected\n");
    throw new Exit(0);
  }
  if (args.continue) {
    const dir = sessionDir ?? defaultSessionDir(cwd);
    const recent = listSessions(dir)[0];
    return recent ? SessionStore.open(recent.path, dir, cwd) : SessionStore.create(cwd, dir);
  }
  return SessionStore.create(cwd, sessionDir ?? defaultSessionDir(cwd));
}
