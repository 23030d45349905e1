// The pi command line, from the request and what the installed pi can do.
// Pure: one place for the flags, shared by one-shot phases and RPC sessions.
import type { PiCapabilities } from "./capabilities.ts";

export const DEFAULT_GATEWAY = "openrouter";

/**
 * A model id becomes a pi route: the gateway provider's prefix, unless
 * `direct` (the id already is a route) or the gateway is empty.
 */
export function route(model: string, gateway: string, direct: boolean): string {
  if (direct || !gateway || model.startsWith(`${gateway}/`)) return model;
  return `${gateway}/${model}`;
}

export interface PiArgvRequest {
  bin: string;
  caps: PiCapabilities;
  mode: "json" | "rpc";
  /** Absolute. */
  sessionDir: string;
  sessionId: string;
  /** The session file agentport named (dialects without --session-id). */
  sessionFile: string | null;
  model?: string;
  gateway: string;
  direct: boolean;
  thinking?: string;
  tools?: string[];
  /** `-e` files; the envelope tool is appended to --tools when one is expected. */
  extensions: string[];
  envelopeTool?: string;
  /** Start from a copy of this session file (RPC arms in other folders). */
  fork?: string;
  /** `--append-system-prompt` (when this pi has it): the user's text, then the envelope's instructions. */
  appendSystemPrompt?: string;
  /** After agentport's own arguments, verbatim. */
  passThrough?: string[];
}

export function piArgv(r: PiArgvRequest): string[] {
  const has = (flag: keyof PiCapabilities["flags"]) => r.caps.flags[flag];
  const argv = [r.bin, "--mode", r.mode];
  // --approve trusts the current repository's .pi/: only where it exists.
  if (has("--approve")) argv.push("--approve");
  if (r.fork !== undefined) argv.push("--fork", r.fork);
  else if (has("--session-id")) argv.push("--session-id", r.sessionId);
  else if (r.sessionFile !== null) argv.push("--session", r.sessionFile);
  if (has("--session-dir")) argv.push("--session-dir", r.sessionDir);
  // A factory node reads neither the workstation's skills nor its templates.
  if (has("--no-skills")) argv.push("--no-skills");
  if (has("--no-prompt-templates")) argv.push("--no-prompt-templates");
  if (has("--offline")) argv.push("--offline");
  if (r.model) argv.push("--model", route(r.model, r.gateway, r.direct));
  if (r.thinking && has("--thinking")) argv.push("--thinking", r.thinking);
  if (r.tools && r.tools.length > 0) {
    // --tools also removes extension tools not listed: the envelope tool must be in it.
    const tools = r.envelopeTool && !r.tools.includes(r.envelopeTool) ? [...r.tools, r.envelopeTool] : r.tools;
    argv.push("--tools", tools.join(","));
  }
  for (const file of r.extensions) argv.push("-e", file);
  if (r.appendSystemPrompt && has("--append-system-prompt")) argv.push("--append-system-prompt", r.appendSystemPrompt);
  argv.push(...(r.passThrough ?? []));
  // The prompt travels on stdin only: argv is world-readable, a prompt that
  // starts with "-" is taken for a flag, and 0.73.1 rejects "--".
  return argv;
}
