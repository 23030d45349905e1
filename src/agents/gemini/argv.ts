// The Gemini CLI's command lines (gemini 0.61.0, ground truth §1-6), and the
// translation of the roster's words into gemini's: the prompt on stdin only
// (gemini reads it to EOF and runs headless when stdin is not a terminal),
// the session id chosen here (`--session-id`, or `--resume` of it), the model
// always pinned (its default `auto` makes a hidden router call first), the
// approval mode from the permission mode, `--skip-trust` only for a folder
// the user trusts.
import type { PermissionMode } from "../../core/agents.ts";

/** What agentport pins when the user names no model: never gemini's `auto`. */
export const DEFAULT_GEMINI_MODEL = "gemini-2.5-flash";

export const GEMINI_APPROVAL: Readonly<Record<PermissionMode, string>> = {
  default: "default",
  dontAsk: "default",
  plan: "plan",
  acceptEdits: "auto_edit",
  bypassPermissions: "yolo",
};

/** pi's tool words → gemini's tool names; other names pass through. */
export const GEMINI_TOOLS: Readonly<Record<string, string>> = {
  read: "read_file",
  bash: "run_shell_command",
  edit: "replace",
  write: "write_file",
  grep: "grep_search",
  find: "glob",
  ls: "list_directory",
};

/** The launcher relaunches itself and ignores SIGTERM: one process, which a signal ends. */
export const GEMINI_ENV: Readonly<Record<string, string>> = { GEMINI_CLI_NO_RELAUNCH: "true" };

export interface GeminiArgvRequest {
  bin: string;
  sessionId: string;
  /** Continue `sessionId` instead of starting it. */
  resume: boolean;
  model?: string;
  tools?: string[];
  permissionMode?: PermissionMode;
  /** The user trusts this folder (agentport's sense): only then --skip-trust. */
  trusted: boolean;
  /** After agentport's own arguments, verbatim. */
  agentArgs?: string[];
}

export const geminiModel = (model: string | undefined): string => (model ? model.slice(model.lastIndexOf("/") + 1) : DEFAULT_GEMINI_MODEL);

export function geminiArgv(request: GeminiArgvRequest): string[] {
  const argv = [request.bin, "--output-format", "stream-json", "-m", geminiModel(request.model)];
  argv.push(request.resume ? "--resume" : "--session-id", request.sessionId);
  if (request.permissionMode !== undefined) argv.push("--approval-mode", GEMINI_APPROVAL[request.permissionMode]);
  if (request.tools && request.tools.length > 0)
    argv.push("--allowed-tools", [...new Set(request.tools.map((t) => GEMINI_TOOLS[t] ?? t))].join(","));
  if (request.trusted) argv.push("--skip-trust");
  argv.push(...(request.agentArgs ?? []));
  return argv;
}

/** A person taking over a session: `gemini --resume ID` on the terminal, in the birth folder. */
export function geminiInteractiveArgv(bin: string, sessionId: string, model: string | null): string[] {
  return [bin, "--resume", sessionId, "-m", geminiModel(model ?? undefined)];
}

/** gemini's exit code for a folder it does not trust (headless). */
export const UNTRUSTED_EXIT = 55;
