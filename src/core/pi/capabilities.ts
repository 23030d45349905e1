// What the installed pi can do, read from its --version and --help. Pure.

export const PI_FLAGS = [
  "--session-id",
  "--approve",
  "--session",
  "--session-dir",
  "--fork",
  "--no-skills",
  "--no-prompt-templates",
  "--no-context-files",
  "--tools",
  "--thinking",
  "--offline",
  "--extension",
  "--append-system-prompt",
] as const;
export type PiFlag = (typeof PI_FLAGS)[number];

export interface PiCapabilities {
  version: string;
  flags: Record<PiFlag, boolean>;
}

/** pi prints both on stderr; pass stdout and stderr together. */
export function parseCapabilities(versionOutput: string, helpOutput: string): PiCapabilities {
  const version = /\b(\d+\.\d+\.\d+(?:[-+][\w.]+)?)\b/.exec(versionOutput)?.[1] ?? "";
  const flags = {} as Record<PiFlag, boolean>;
  for (const flag of PI_FLAGS) {
    // The flag as a word of its own: `--session` must not match `--session-dir`.
    const escaped = flag.replace(/[-]/g, "\\-");
    flags[flag] = new RegExp(`(^|[\\s,])${escaped}(?=[\\s,=<]|$)`, "m").test(helpOutput);
  }
  return { version, flags };
}

/** A dialect worth naming: what agentport relies on to choose the session before the call. */
export function sessionNaming(caps: PiCapabilities): "session-id" | "session-file" | "none" {
  if (caps.flags["--session-id"]) return "session-id";
  if (caps.flags["--session"]) return "session-file";
  return "none";
}
