// The Claude Code adapter: argv for `claude -p --output-format stream-json`.

export interface ClaudeArgvRequest {
  bin: string;
  sessionId: string;
  model?: string;
  tools?: string[];
  /** Continue this session instead of starting one with `sessionId`. */
  resume?: boolean;
  /** claude's own --permission-mode (agentport's modes are claude's words). */
  permissionMode?: string;
  /** Appended to claude's system prompt (`--append-system-prompt`): the user's, then the envelope's instructions. */
  appendSystemPrompt?: string;
}

/**
 * The prompt goes on stdin, never in argv: argv is visible to every user of
 * the machine, and `--allowedTools` is variadic, so a prompt after it would
 * be swallowed (ground truth §2).
 */
export function claudeArgv(request: ClaudeArgvRequest): string[] {
  const argv = [request.bin, "-p", "--output-format", "stream-json", "--verbose"];
  argv.push(request.resume ? "--resume" : "--session-id", request.sessionId);
  if (request.model) argv.push("--model", request.model);
  if (request.permissionMode) argv.push("--permission-mode", request.permissionMode);
  if (request.appendSystemPrompt) argv.push("--append-system-prompt", request.appendSystemPrompt);
  // Last: --allowedTools is variadic and would swallow what follows it.
  if (request.tools && request.tools.length > 0) argv.push(`--allowedTools=${request.tools.join(",")}`);
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
