// The Claude Code adapter: argv for `claude -p --output-format stream-json`.
import type { AgentExtras } from "../extras.ts";

export interface ClaudeArgvRequest extends Omit<AgentExtras, "failOnRefusal"> {
  bin: string;
  sessionId: string;
  model?: string;
  tools?: string[];
  /** Continue this session instead of starting one with `sessionId`. */
  resume?: boolean;
  /** Start `sessionId` as a copy of this session's history (`--resume ID --fork-session`; claude keeps sessions per folder: the same one). */
  forkOf?: string;
  /** Appended to claude's system prompt (`--append-system-prompt`): the user's, then the envelope's instructions. */
  appendSystemPrompt?: string;
}

/** USD for --max-budget-usd: micro-USD written without float noise (1500 → 0.0015). */
const usd = (micro: number): string => String(micro / 1e6);

/**
 * The prompt goes on stdin, never in argv: argv is visible to every user of
 * the machine, and `--allowedTools` is variadic, so a prompt after it would
 * be swallowed (ground truth §2). Every value agentport adds is written
 * `--flag=value`, so no value (a system prompt that starts with "-") is read
 * as a flag; the pass-through comes last, after agentport's own arguments.
 */
export function claudeArgv(request: ClaudeArgvRequest): string[] {
  const argv = [request.bin, "-p", "--output-format", "stream-json", "--verbose"];
  if (request.forkOf !== undefined) argv.push("--resume", request.forkOf, "--fork-session", "--session-id", request.sessionId);
  else argv.push(request.resume ? "--resume" : "--session-id", request.sessionId);
  if (request.model) argv.push("--model", request.model);
  if (request.appendSystemPrompt) argv.push(`--append-system-prompt=${request.appendSystemPrompt}`);
  if (request.permissionMode) argv.push(`--permission-mode=${request.permissionMode}`);
  if (request.maxTurns !== undefined) argv.push(`--max-turns=${request.maxTurns}`);
  if (request.maxCostMicroUsd !== undefined) argv.push(`--max-budget-usd=${usd(request.maxCostMicroUsd)}`);
  if (request.tools && request.tools.length > 0) argv.push(`--allowedTools=${request.tools.join(",")}`);
  argv.push(...(request.passThrough ?? []));
  return argv;
}

/**
 * A person taking over a session: `claude --resume <id>` on the terminal, in
 * the session's birth folder (claude keeps its sessions per folder). The model
 * is the session's, without a provider prefix (translate.ts).
 */
export function claudeInteractiveArgv(request: { bin: string; sessionId: string; model?: string }): string[] {
  const argv = [request.bin, "--resume", request.sessionId];
  if (request.model) argv.push("--model", request.model);
  return argv;
}
