// The settings of a run: their names (the flags), their typed shape, the
// source each value came from, and agentport's defaults. Types and constants only.
import type { BudgetOptions } from "../core/budget.ts";
import type { PermissionMode, ThinkingLevel } from "../core/translate.ts";
import { DEFAULT_GATEWAY } from "../core/pi/argv.ts";
import { DEFAULT_NUDGES } from "./schema.ts";
import type { AgentName } from "../core/agents.ts";

export type AgentKind = AgentName;
export type Source = "default" | "file" | "environment" | "session" | "flag";

export const DEFAULT_AGENT: AgentKind = "claude";
export { DEFAULT_GATEWAY };
/** Every phase and every RPC turn: a hung agent must not block a CI job forever. */
export const DEFAULT_TIMEOUT_S = 1800;
export const DEFAULT_LINGER_S = 10;
/** Lines agentport will frame: bounded so a typo cannot ask for gigabytes. */
export const MAX_MAX_LINE_BYTES = 256 * 1024 * 1024;
export { DEFAULT_NUDGES };

/** The settings, by flag name. */
export const SETTING_KEYS = [
  "agent",
  "model",
  "thinking",
  "tools",
  "permission-mode",
  "fail-on-refusal",
  "max-turns",
  "max-cost",
  "append-system-prompt",
  "timeout",
  "stall",
  "max-tokens",
  "budget",
  "cache-read-weight",
  "budget-grace",
  "loop",
  "loop-repeat",
  "linger",
  "profile",
  "require-ext",
  "schema",
  "envelope",
  "nudges",
  "gateway",
  "direct",
  "session-dir",
  "pi-bin",
  "claude-bin",
  "home",
  "ledger",
  "max-line-bytes",
  "keep-stream",
  "keep-prompt",
  "env-file",
  "env-allow",
  "pass-through",
  "serve",
  "isolate",
  "network",
  "expect-change",
  "expect-file",
  "tool-timeout",
  "tell-deadline",
  "grace",
  "acp-command",
  "permissions",
] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];

/** --network under --isolate: the host's network, or none at all. */
export const NETWORKS = ["host", "none"] as const;
export type Network = (typeof NETWORKS)[number];

export type EnvelopeChoice = { kind: "none" } | { kind: "default" } | { kind: "file"; path: string; label: string };

export interface Settings {
  /** The named agent used (--as, or the config's default_agent), else null. */
  name: string | null;
  agent: AgentKind;
  model: string | null;
  thinking: ThinkingLevel | null;
  /** As written (either vocabulary), every name checked; translated by each runner. */
  tools: string[] | null;
  permissionMode: PermissionMode | null;
  /** --permissions FILE: the permission policy file (absolute), read by agentSetup. */
  permissions: string | null;
  failOnRefusal: boolean;
  maxTurns: number | null;
  maxCostMicroUsd: number | null;
  /** TEXT or @FILE, in order; an @FILE is read after resolving. */
  appendSystemPrompt: string[];
  /** null: no limit. */
  timeoutMs: number | null;
  stallMs: number | null;
  /** The timeout told in the appended system prompt (--tell-deadline). */
  tellDeadline: boolean;
  /** One tool call's bound (--tool-timeout); null: none. */
  toolTimeoutMs: number | null;
  /** The wrap-up told this long before the timeout (--grace); null: none. */
  graceMs: number | null;
  budget: BudgetOptions | null;
  /** null: loop detection off. */
  loopRepeat: number | null;
  lingerMs: number;
  profile: string[] | null;
  requireExt: string[];
  envelope: EnvelopeChoice;
  nudges: number;
  gateway: string;
  direct: boolean;
  /** null: <home>/pi-sessions. */
  sessionDir: string | null;
  piBin: string | null;
  claudeBin: string | null;
  /** null: $XDG_STATE_HOME/agentport, else ~/.local/state/agentport. */
  home: string | null;
  /** sqlite:PATH or postgres://…; null: <home>/ledger.sqlite. */
  ledger: string | null;
  maxLineBytes: number;
  /** stream.jsonl in each phase's run folder (default on). */
  keepStream: boolean;
  /** prompt.txt in each phase's run folder (default off: only its sha256 and size). */
  keepPrompt: boolean;
  /** opencode: the HTTP / SSE adapter (`opencode serve`) instead of `opencode run`. */
  serve: boolean;
  /** acp: the ACP agent's command line (--acp-command, the roster's acp_command). */
  acpCommand: string[] | null;
  /** --env-file, in order (the config's own env files come first, added where it is read). */
  envFiles: string[];
  /** --env-allow: names an env file may set, and agentport's own variables the agent may inherit (the config's env_allow is added where it is read). */
  envAllow: string[];
  /** Everything after `--`, verbatim, after agentport's own arguments. */
  passThrough: string[];
  /** The run must leave a change in its folder (--expect-change). */
  expectChange: boolean;
  /** Files the run must write, relative to its folder (--expect-file). */
  expectFiles: string[];
  /** Run the agent under bwrap (--isolate, `isolate` in agentport.json); null: not said (run: no; bon: where bwrap works). */
  isolate: boolean | null;
  network: Network;
}

export type Sources = Record<SettingKey, Source>;
