// The agents' names: the one list the verdict, the ledger and the roster
// validate against. Each name has exactly one adapter in src/agents/table.ts
// (typed as a record over these names, so neither can drift); and the part
// of each row the settings resolver and the core read (AGENT_TRAITS). Pure.
import type { ToolWords } from "./translate.ts";

export const AGENT_NAMES = ["claude", "pi", "codex", "gemini", "opencode", "acp"] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** The fake agents built into the binary (`agentport fake-claude …`, or a symlink of that name). */
export const FAKE_NAMES = ["fake-claude", "fake-pi", "fake-codex", "fake-gemini", "fake-opencode", "fake-acp"] as const;
export type FakeName = (typeof FAKE_NAMES)[number];

/**
 * The part of each agent's row that the settings resolver and the pure core
 * read (config/ and core/ do not import the adapter table, src/agents/table.ts):
 * capabilities an agent has, as data, so no decision compares an agent's name.
 */
export interface AgentTraits {
  /** Its tool names are checked in this vocabulary (translate.ts: pi's words, or Claude Code's); null: its names are not checked here (its own words, or no allowlist). */
  toolWords: ToolWords | null;
  /** It asks before using a tool, answered by a permission mode (isolated, it defaults to bypassPermissions: the sandbox is the boundary). */
  permissionModes: boolean;
  /** It is a binary of its own name (`--<name>-bin`, `$AGENTPORT_<NAME>_BIN`, PATH); else its command comes from the settings (--acp-command). */
  namedBinary: boolean;
  /** Its refusals name what decided them (the mode, the policy file's rule, or the client that said no), so agentport adds no guidance. */
  refusalsExplained: boolean;
}

export const AGENT_TRAITS: Readonly<Record<AgentName, AgentTraits>> = {
  claude: { toolWords: "claude", permissionModes: true, namedBinary: true, refusalsExplained: false },
  pi: { toolWords: "pi", permissionModes: false, namedBinary: true, refusalsExplained: false },
  codex: { toolWords: null, permissionModes: true, namedBinary: true, refusalsExplained: false },
  gemini: { toolWords: null, permissionModes: true, namedBinary: true, refusalsExplained: false },
  opencode: { toolWords: null, permissionModes: true, namedBinary: true, refusalsExplained: false },
  acp: { toolWords: null, permissionModes: true, namedBinary: false, refusalsExplained: true },
};

export const isAgentName = (value: unknown): value is AgentName =>
  typeof value === "string" && (AGENT_NAMES as readonly string[]).includes(value);

/** agentport's permission modes, in Claude Code's words (each adapter maps them to its agent's). */
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
