// One roster, two agents: the words of a named agent (pi's vocabulary) turned
// into what each agent takes. Pure, and the only place that knows the
// asymmetries, so switching an agent from pi to claude is changing one word.
//
// - tools: pi's read, bash, edit, write, grep, find, ls; Claude Code's Read,
//   Bash, Edit, Write, Grep, Glob (no ls: Bash covers it, no find: Glob).
//   Names neither agent's built-ins (an MCP tool, `Bash(git:*)`, pi's
//   report_phase) pass through unchanged. De-duplicated, first one wins.
// - thinking: pi's scale (off … xhigh) plus `max`; pi takes the level as
//   `--thinking` (max is pi's xhigh), claude a token budget in the
//   MAX_THINKING_TOKENS environment variable.
// - model: pi takes a route (`provider/id`, the gateway prefix is added in
//   core/pi/argv.ts); claude drops every provider prefix and takes the bare id.

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
export type ThinkingLevel = (typeof THINKING_LEVELS)[number];

export const PI_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;
export type PiTool = (typeof PI_TOOLS)[number];

/** pi's tool → Claude Code's (the seed's CLAUDE_TOOLS). */
export const CLAUDE_TOOLS: Readonly<Record<PiTool, string>> = {
  read: "Read",
  bash: "Bash",
  edit: "Edit",
  write: "Write",
  grep: "Grep",
  find: "Glob",
  ls: "Bash",
};

/**
 * Claude Code's tools as its `system/init` lists them (2.1.197, with and
 * without a permission prompt tool), plus the ones older versions list.
 */
export const CLAUDE_KNOWN_TOOLS = [
  "Agent",
  "AskUserQuestion",
  "Bash",
  "BashOutput",
  "CronCreate",
  "CronDelete",
  "CronList",
  "Edit",
  "EnterPlanMode",
  "EnterWorktree",
  "ExitPlanMode",
  "ExitWorktree",
  "Glob",
  "Grep",
  "KillShell",
  "ListMcpResourcesTool",
  "MultiEdit",
  "NotebookEdit",
  "Read",
  "ReadMcpResourceTool",
  "ReportFindings",
  "ScheduleWakeup",
  "SendMessage",
  "Skill",
  "SlashCommand",
  "Task",
  "TaskCreate",
  "TaskGet",
  "TaskList",
  "TaskOutput",
  "TaskStop",
  "TaskUpdate",
  "TodoWrite",
  "WebFetch",
  "WebSearch",
  "Workflow",
  "Write",
] as const;

/** Claude Code's tool → pi's, for a roster written in Claude's words and run as pi. */
export const PI_TOOLS_FROM_CLAUDE: Readonly<Record<string, PiTool>> = {
  Read: "read",
  Bash: "bash",
  Edit: "edit",
  Write: "write",
  Grep: "grep",
  Glob: "find",
};

/** The thinking level as claude's MAX_THINKING_TOKENS (the seed's THINKING_TOKENS). */
export const THINKING_TOKENS: Readonly<Record<ThinkingLevel, number>> = {
  off: 0,
  minimal: 1024,
  low: 4096,
  medium: 8192,
  high: 16384,
  xhigh: 24576,
  max: 32000,
};

/** The thinking level as pi's `--thinking` (pi has no `max`: its highest level is xhigh). */
export const PI_THINKING: Readonly<Record<ThinkingLevel, string>> = {
  off: "off",
  minimal: "minimal",
  low: "low",
  medium: "medium",
  high: "high",
  xhigh: "xhigh",
  max: "xhigh",
};

export const isThinkingLevel = (value: unknown): value is ThinkingLevel =>
  typeof value === "string" && (THINKING_LEVELS as readonly string[]).includes(value);

const dedupe = (names: string[]): string[] => [...new Set(names)];
const has = <K extends string>(table: Readonly<Record<K, unknown>>, key: string): key is K => Object.hasOwn(table, key);

/** `mcp__server__tool` (or `mcp__server`, every tool of a server): claude's MCP names. */
const MCP_TOOL = /^mcp__[A-Za-z0-9_-]+(__[A-Za-z0-9_.-]+)?$/;
/** A permission rule on a known tool: `Bash(git:*)`, `Read(src/**)`. */
const TOOL_RULE = /^([A-Za-z]+)\((.+)\)$/s;

/** The tool vocabularies agentport checks names in: pi's, and Claude Code's (each takes the other's words too). */
export type ToolWords = "pi" | "claude";

/** The tool names a vocabulary knows, in both, for a message that lists them. */
export function knownTools(vocabulary: ToolWords): string[] {
  if (vocabulary === "pi") return [...PI_TOOLS, ...Object.keys(PI_TOOLS_FROM_CLAUDE)];
  return [...PI_TOOLS, ...CLAUDE_KNOWN_TOOLS, "mcp__<server>__<tool>"];
}

/** Whether `name` is one of the vocabulary's tools, in its words or the other's. */
export function isKnownTool(vocabulary: ToolWords, name: string): boolean {
  if (has(CLAUDE_TOOLS, name)) return true;
  if (vocabulary === "pi") return Object.hasOwn(PI_TOOLS_FROM_CLAUDE, name);
  if ((CLAUDE_KNOWN_TOOLS as readonly string[]).includes(name) || MCP_TOOL.test(name)) return true;
  const rule = TOOL_RULE.exec(name);
  return rule !== null && rule[1] !== undefined && isKnownTool(vocabulary, rule[1]);
}

/** The names of `tools` the vocabulary does not know: a typo must not silently remove a tool. */
export function unknownTools(vocabulary: ToolWords, tools: readonly string[]): string[] {
  return tools.filter((t) => !isKnownTool(vocabulary, t));
}

/** Tool names for Claude Code's --allowedTools. */
export function claudeTools(tools: readonly string[]): string[] {
  return dedupe(tools.map((t) => (has(CLAUDE_TOOLS, t) ? CLAUDE_TOOLS[t] : t)));
}

/** Tool names for pi's --tools. */
export function piTools(tools: readonly string[]): string[] {
  return dedupe(tools.map((t) => (Object.hasOwn(PI_TOOLS_FROM_CLAUDE, t) ? (PI_TOOLS_FROM_CLAUDE[t] ?? t) : t)));
}

/** The environment claude gets for a thinking level: {} when none is asked. */
export function claudeThinkingEnv(level: ThinkingLevel | undefined): Record<string, string> {
  return level === undefined ? {} : { MAX_THINKING_TOKENS: String(THINKING_TOKENS[level]) };
}

export function piThinking(level: ThinkingLevel | undefined): string | undefined {
  return level === undefined ? undefined : PI_THINKING[level];
}

/** claude's model id: the part after the last "/" (`openrouter/anthropic/claude-sonnet-4` → `claude-sonnet-4`). */
export function claudeModel(model: string): string {
  return model.slice(model.lastIndexOf("/") + 1);
}

export interface AgentWords {
  model?: string;
  tools?: readonly string[];
  thinking?: ThinkingLevel;
}

export type Translated =
  | { agent: "pi"; model?: string; tools?: string[]; thinking?: string; env: Record<string, string> }
  | { agent: "claude"; model?: string; tools?: string[]; env: Record<string, string> };

/** A named agent's words, for one agent: what its argv and environment take. */
export function translate(agent: "pi" | "claude", words: AgentWords): Translated {
  const tools = words.tools && words.tools.length > 0 ? words.tools : undefined;
  if (agent === "pi") {
    return { agent, model: words.model, tools: tools && piTools(tools), thinking: piThinking(words.thinking), env: {} };
  }
  return {
    agent,
    model: words.model === undefined ? undefined : claudeModel(words.model),
    tools: tools && claudeTools(tools),
    env: claudeThinkingEnv(words.thinking),
  };
}

/** Claude Code's `--permission-mode` choices, agentport's words for every agent (core/agents.ts); pi has none. */
export { PERMISSION_MODES, type PermissionMode } from "./agents.ts";
