// What each agent can be asked: its row of the adapter table declares, for
// every setting a user can give, how the agent takes it (words of its command
// line, its environment, or agentport's own supervision) or that it cannot,
// with what to use instead. A setting the chosen agent cannot take is refused
// before anything starts (exit 2, one line); nothing is dropped in silence.
// docs/agents.md's "Every flag, for every agent" table is these rows (tested).
import type { AgentName } from "../core/agents.ts";
import { settingLabel, type SettingKey, type Settings, type Sources } from "../config/resolve.ts";
import { priceOf, type Prices } from "../core/prices.ts";

/** The settings an agent declares, in the flag table's order (docs/agents.md). */
export const REQUEST_SETTINGS = [
  "model",
  "tools",
  "thinking",
  "permission-mode",
  "permissions",
  "fail-on-refusal",
  "max-turns",
  "max-cost",
  "append-system-prompt",
  "pass-through",
  "timeout",
  "tell-deadline",
  "grace",
  "supervision",
  "envelope",
  "nudges",
  "environment",
  "session-dir",
  "gateway",
  "require-ext",
  "serve",
] as const;
export type RequestSetting = (typeof REQUEST_SETTINGS)[number];

/** The flag table's first column for each setting. */
export const SETTING_FLAGS: Readonly<Record<RequestSetting, string>> = {
  model: "`--model ID`",
  tools: "`--tools a,b`",
  thinking: "`--thinking L`",
  "permission-mode": "`--permission-mode M`",
  permissions: "`--permissions FILE`",
  "fail-on-refusal": "`--fail-on-refusal`",
  "max-turns": "`--max-turns N`",
  "max-cost": "`--max-cost USD`",
  "append-system-prompt": "`--append-system-prompt TEXT\\|@FILE` (repeatable)",
  "pass-through": "`-- ARGS…`",
  timeout: "`--timeout S` (default 1800, 0 for none)",
  "tell-deadline": "`--tell-deadline` (with a timeout)",
  grace: "`--grace S` (with a timeout)",
  supervision: "`--stall`, `--max-tokens`, `--budget`, `--loop…`, `--linger`",
  envelope: "`--schema FILE` / `--envelope`",
  nudges: "`--nudges N` (with an envelope)",
  environment: "`--profile K,…`, `--env-file F`, `--env-allow NAME`",
  "session-dir": "`--session-dir DIR`",
  gateway: "`--gateway G`, `--direct`",
  "require-ext": "`--require-ext K:NAME`",
  serve: '`--serve` (`"serve": true`)',
};

/** What a refusal may depend on besides the settings. */
export interface RequestContext {
  /** The flag, variable or field the value came from (`--max-cost`, `max_cost (agentport.json)`). */
  label: string;
  /** agentport.json's `prices`, by model. */
  prices: Readonly<Record<string, unknown>>;
}

export type Expression =
  /** Taken: how (the flag table's cell); `refuse` names a value it cannot take after all (the whole line), else null. */
  | {
      how: string;
      refuse?: (s: Settings, ctx: RequestContext) => string | null /** agentport's supervisor enforces it, not the agent's command line. */;
      supervised?: true;
    }
  /** Never taken: why (naming the agent), and what to use instead. */
  | { refused: string; instead: string };

export type SettingsRow = Readonly<Record<RequestSetting, Expression>>;

/** The flag table's cell for one expression. */
export const readmeCell = (e: Expression): string => ("how" in e ? e.how : `usage error (exit 2): ${e.instead}`);

const asked = (sources: Sources, key: SettingKey): boolean =>
  sources[key] === "flag" || sources[key] === "file" || sources[key] === "session";

/** The setting's key when the user asked for it (not a default, not the environment's), else null. */
function askedKey(setting: RequestSetting, s: Settings, sources: Sources): SettingKey | null {
  switch (setting) {
    case "model":
      return s.model !== null ? "model" : null;
    case "tools":
      return s.tools !== null ? "tools" : null;
    case "thinking":
      return s.thinking !== null ? "thinking" : null;
    case "permission-mode":
      return s.permissionMode !== null ? "permission-mode" : null;
    case "permissions":
      return s.permissions !== null ? "permissions" : null;
    case "fail-on-refusal":
      return s.failOnRefusal ? "fail-on-refusal" : null;
    case "max-turns":
      return s.maxTurns !== null ? "max-turns" : null;
    case "max-cost":
      return s.maxCostMicroUsd !== null ? "max-cost" : null;
    case "append-system-prompt":
      return s.appendSystemPrompt.length > 0 ? "append-system-prompt" : null;
    case "pass-through":
      return s.passThrough.length > 0 ? "pass-through" : null;
    case "tell-deadline":
      return s.tellDeadline ? "tell-deadline" : null;
    case "grace":
      return s.graceMs !== null ? "grace" : null;
    case "envelope":
      return s.envelope.kind === "file" ? "schema" : s.envelope.kind === "default" ? "envelope" : null;
    case "nudges":
      return s.nudges > 0 ? "nudges" : null;
    case "session-dir":
      return s.sessionDir !== null && asked(sources, "session-dir") ? "session-dir" : null;
    // A session's birth request holds the default gateway: only a flag or the file asks for one.
    case "gateway":
      return sources.gateway === "flag" || sources.gateway === "file" ? "gateway" : s.direct && asked(sources, "direct") ? "direct" : null;
    case "require-ext":
      return s.requireExt.length > 0 ? "require-ext" : null;
    case "serve":
      return s.serve ? "serve" : null;
    // Every agent takes these.
    case "timeout":
    case "supervision":
    case "environment":
      return null;
  }
}

/** Every setting asked of `agent` that its row cannot take: one line each, naming the agent, the setting and what to use instead. */
export function requestIssues(
  agent: AgentName,
  row: SettingsRow,
  s: Settings,
  sources: Sources,
  prices: Readonly<Record<string, unknown>> = {},
): string[] {
  const issues: string[] = [];
  for (const setting of REQUEST_SETTINGS) {
    const key = askedKey(setting, s, sources);
    if (key === null) continue;
    const label = settingLabel(sources[key], key);
    const e = row[setting];
    if ("refused" in e) issues.push(`${label}: ${e.refused}; ${e.instead}`);
    else {
      const line = e.refuse?.(s, { label, prices });
      if (line) issues.push(line);
    }
  }
  // Each line names the agent: the refusals are written for it.
  return issues.map((line) => (line.includes(agent) ? line : `${agent}: ${line}`));
}

/** The rows all three one-shot CLIs share that only pi has. */
export function piOnly(agent: AgentName, keeps: string): Pick<SettingsRow, "session-dir" | "gateway" | "require-ext"> {
  return {
    "session-dir": { refused: `it is pi's session folder (${agent} keeps its sessions ${keeps})`, instead: "drop it" },
    gateway: {
      refused: `the gateway is pi's model route (${agent} takes --model as it names the model)`,
      instead: `give --model as ${agent} names it`,
    },
    "require-ext": { refused: `required extensions are pi's (${agent} loads none of agentport's)`, instead: "drop it" },
  };
}

/** `--serve` for an agent other than opencode. */
export const notServed = (agent: AgentName): Expression => ({
  refused: `only opencode has a serve mode (${agent} is run one-shot)`,
  instead: "opencode only",
});

/** `--tell-deadline` for an agent whose system prompt takes no line of agentport's. */
export const untoldDeadline = (agent: AgentName): Expression => ({
  refused: `${agent} takes no appended system prompt to tell the deadline in`,
  instead: "its environment has it as AGENTPORT_DEADLINE; or say it in the prompt",
});

/** `--grace` for an agent that takes no message while it runs: `how` says how it is run. */
export const noWrapUp = (agent: AgentName, how: string, told = true): Expression => ({
  refused: `${agent} ${how}: it takes no message while it runs, so no wrap-up can be told`,
  instead: told
    ? "use --tell-deadline (the deadline told at the start)"
    : "its environment has the deadline as AGENTPORT_DEADLINE; or say it in the prompt",
});

/** What every agent takes the same way: agentport's supervision and the agent's environment. */
export const SUPERVISED: Pick<SettingsRow, "timeout" | "supervision" | "environment" | "fail-on-refusal"> = {
  timeout: { how: "every phase" },
  supervision: { how: "the supervisor" },
  environment: { how: "the agent's environment" },
  "fail-on-refusal": { how: "a completed run with refused requests fails (exit 1)" },
};

/** `--max-cost` for an agent that reports no cost: the supervisor needs the model's price. */
export const pricedCost = (agent: AgentName): Expression => ({
  how: "enforced by the supervisor on the running cost, priced from agentport.json `prices` or the built-in table (`agentport prices`; no price: usage error)",
  refuse: (s, ctx) =>
    priceOf(s.model, ctx.prices as Prices) !== null
      ? null
      : `${ctx.label}: ${agent} reports no cost and no price is known for ${s.model === null ? "its default model (give --model)" : `model ${s.model}`}, so the cost would be unknown; add it to \`prices\` in agentport.json (see agentport prices), or bound the run with --max-tokens`,
});
