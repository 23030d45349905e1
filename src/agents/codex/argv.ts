// The Codex CLI's command lines (codex 0.169.0, ground truth §1-6), and the
// translation of the roster's words into codex's: the prompt always on stdin
// (codex reads it to EOF whenever stdin is not a terminal, so it is closed
// after the prompt), `--skip-git-repo-check` outside a repository, the sandbox
// from the permission mode, the reasoning effort from the thinking level, the
// bare model id. codex has no tool allowlist: the sandbox is what bounds it.
import type { PermissionMode } from "../../core/agents.ts";
import type { ThinkingLevel } from "../../core/translate.ts";

/** `--sandbox` per permission mode: codex exec forces approval policy never, so only the sandbox varies. */
export const CODEX_SANDBOX: Readonly<Record<PermissionMode, string>> = {
  default: "read-only",
  plan: "read-only",
  dontAsk: "read-only",
  acceptEdits: "workspace-write",
  bypassPermissions: "danger-full-access",
};

/** `model_reasoning_effort` per thinking level. */
export const CODEX_EFFORT: Readonly<Record<ThinkingLevel, string>> = {
  off: "minimal",
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "high",
  max: "high",
};

export interface CodexArgvRequest {
  bin: string;
  model?: string;
  thinking?: ThinkingLevel;
  permissionMode?: PermissionMode;
  /** The working folder is inside a git work tree (else --skip-git-repo-check). */
  inGit: boolean;
  /** Continue this thread (`exec resume ID`). */
  resumeThread?: string;
  /** A JSON Schema file for --output-schema (codex asks for it but never validates the reply). */
  outputSchema?: string;
  /** The user's system-prompt addition: codex's `developer_instructions`. */
  appendSystemPrompt?: string;
  /** After agentport's own options, before `resume ID -`, verbatim. */
  agentArgs?: string[];
}

/** The model id codex takes: the part after the last "/" (`openai/gpt-5.5` → `gpt-5.5`). */
export const codexModel = (model: string): string => model.slice(model.lastIndexOf("/") + 1);

export function codexArgv(request: CodexArgvRequest): string[] {
  const argv = [request.bin, "exec", "--json"];
  if (!request.inGit) argv.push("--skip-git-repo-check");
  if (request.model) argv.push("-m", codexModel(request.model));
  if (request.permissionMode !== undefined) argv.push("--sandbox", CODEX_SANDBOX[request.permissionMode]);
  if (request.thinking !== undefined) argv.push("-c", `model_reasoning_effort="${CODEX_EFFORT[request.thinking]}"`);
  if (request.outputSchema) argv.push("--output-schema", request.outputSchema);
  // A JSON string is a TOML basic string: codex reads the value as TOML.
  if (request.appendSystemPrompt) argv.push("-c", `developer_instructions=${JSON.stringify(request.appendSystemPrompt)}`);
  argv.push(...(request.agentArgs ?? []));
  if (request.resumeThread !== undefined) argv.push("resume", request.resumeThread);
  // "-": the prompt is stdin, never argv (argv is visible to every user of the machine).
  argv.push("-");
  return argv;
}

/** A person taking over a thread: `codex resume ID` on the terminal, in the birth folder. */
export function codexInteractiveArgv(bin: string, threadId: string): string[] {
  return [bin, "resume", threadId];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** codex resumes only a UUID: any other id silently starts a new thread (ground truth §4). */
export const isThreadId = (id: string): boolean => UUID.test(id);
