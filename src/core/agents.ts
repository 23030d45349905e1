// The agents' names: the one list the verdict, the ledger and the roster
// validate against. Each name has exactly one adapter in src/agents/table.ts
// (typed as a record over these names, so neither can drift). Pure.

export const AGENT_NAMES = ["claude", "pi", "codex", "gemini", "opencode", "acp"] as const;
export type AgentName = (typeof AGENT_NAMES)[number];

/** The fake agents built into the binary (`agentport fake-claude …`, or a symlink of that name). */
export const FAKE_NAMES = ["fake-claude", "fake-pi", "fake-codex", "fake-gemini", "fake-opencode", "fake-acp"] as const;
export type FakeName = (typeof FAKE_NAMES)[number];

export const isAgentName = (value: unknown): value is AgentName =>
  typeof value === "string" && (AGENT_NAMES as readonly string[]).includes(value);

/** agentport's permission modes, in Claude Code's words (each adapter maps them to its agent's). */
export const PERMISSION_MODES = ["default", "acceptEdits", "plan", "bypassPermissions", "dontAsk"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
