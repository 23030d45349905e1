// Where pi keeps its files: the agent dir, the default session dirs, settings.json.
import { mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import type { Json } from "../../core/record.ts";

export const expandTilde = (p: string): string => (p === "~" ? homedir() : p.startsWith("~/") ? join(homedir(), p.slice(2)) : p);
export const agentDir = (): string =>
  process.env.PI_CODING_AGENT_DIR ? expandTilde(process.env.PI_CODING_AGENT_DIR) : join(homedir(), ".pi", "agent");
export const sessionsRoot = (): string => join(agentDir(), "sessions");
export const fileStamp = (iso: string): string => iso.replace(/[:.]/g, "-");

/** pi's default session dir for a cwd: `<agent dir>/sessions/--<cwd, / replaced by ->--/`, created on the way. */
export function defaultSessionDir(cwd: string): string {
  const dir = join(sessionsRoot(), `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function readJson(path: string): Json {
  try {
    const value: unknown = JSON.parse(readFileSync(path, "utf8"));
    return value && typeof value === "object" ? (value as Json) : {};
  } catch {
    return {};
  }
}

/** settings.json as pi merges it: the agent dir's, then the project's `.pi/settings.json`. */
export function loadSettings(cwd: string): Json {
  const global = readJson(join(agentDir(), "settings.json"));
  const project = readJson(join(cwd, ".pi", "settings.json"));
  const retry = { ...((global.retry as Json | undefined) ?? {}), ...((project.retry as Json | undefined) ?? {}) };
  return { ...global, ...project, retry };
}
