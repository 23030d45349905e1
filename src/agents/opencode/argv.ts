// opencode's command lines (opencode 1.18.33, ground truth §1-5): the prompt
// always on stdin (an argument reaches the model wrapped in quotes; `run`
// reads a piped stdin to EOF), JSONL records, the model as opencode names it
// (`provider/model`), `-s ID` to continue a session opencode named, `--auto`
// only for bypassPermissions, opencode's `plan` agent for plan (every other
// mode keeps opencode's rules, whose asks `run` auto-rejects).
import type { PermissionMode } from "../../core/agents.ts";
import type { ThinkingLevel } from "../../core/translate.ts";

/** `--variant` per thinking level (opencode's reasoning effort names). */
export const OPENCODE_VARIANT: Readonly<Record<ThinkingLevel, string>> = {
  off: "minimal",
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "max",
  max: "max",
};

export interface OpencodeArgvRequest {
  bin: string;
  model?: string;
  permissionMode?: PermissionMode;
  thinking?: ThinkingLevel;
  /** Continue this opencode session (`-s ses_…`). */
  resumeSession?: string;
  /** After agentport's own arguments, verbatim. */
  agentArgs?: string[];
}

export function opencodeArgv(request: OpencodeArgvRequest): string[] {
  const argv = [request.bin, "run", "--format", "json"];
  if (request.model) argv.push("-m", request.model);
  if (request.thinking !== undefined) argv.push("--variant", OPENCODE_VARIANT[request.thinking]);
  if (request.permissionMode === "bypassPermissions") argv.push("--auto");
  // opencode's own read-only agent.
  if (request.permissionMode === "plan") argv.push("--agent", "plan");
  if (request.resumeSession !== undefined) argv.push("-s", request.resumeSession);
  argv.push(...(request.agentArgs ?? []));
  return argv;
}

/** A person taking over a session: opencode's terminal UI on it, in the birth folder. */
export function opencodeInteractiveArgv(bin: string, sessionId: string): string[] {
  return [bin, "-s", sessionId];
}

/** opencode's session ids: `ses_` and its own characters. */
export const isOpencodeSession = (id: string): boolean => /^ses_[0-9A-Za-z]{10,64}$/.test(id);
