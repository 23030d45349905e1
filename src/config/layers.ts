// Where a setting's value comes from besides the flags: the environment's
// variables and a named agent of agentport.json, each a layer by setting;
// and how a message names the source of a value.
import type { FlagRecord, FlagValue } from "./values.ts";
import type { NamedAgent } from "./schema.ts";
import type { EnvelopeChoice, SettingKey, Source } from "./run-settings.ts";

/** Environment variables that stand for a setting. */
const ENV_SETTINGS: Partial<Record<SettingKey, string>> = {
  home: "AGENTPORT_HOME",
  ledger: "AGENTPORT_LEDGER",
  gateway: "AGENTPORT_GATEWAY",
  "pi-bin": "AGENTPORT_PI_BIN",
  "claude-bin": "AGENTPORT_CLAUDE_BIN",
};

export interface NamedInput {
  name: string;
  agent: NamedAgent;
  /** The config file (for messages) and its folder (relative paths in it). */
  file: string;
  dir: string;
}

/** The environment's values, by setting; empty bin and home variables are unset, AGENTPORT_GATEWAY="" is a value (no prefix). */
export function envLayer(env: Readonly<Record<string, string | undefined>>): FlagRecord {
  const out: Record<string, string> = {};
  for (const [key, variable] of Object.entries(ENV_SETTINGS)) {
    const value = env[variable];
    if (value !== undefined && (value !== "" || key === "gateway")) out[key] = value;
  }
  return out;
}

const joinPath = (dir: string, path: string): string => (path.startsWith("/") ? path : `${dir.replace(/\/+$/, "")}/${path}`);

/** A named agent's values, typed, by setting. */
export function fileLayer(named: NamedInput | null | undefined): Partial<Record<SettingKey, unknown>> {
  if (!named) return {};
  const a = named.agent;
  const prompts =
    a.append_system_prompt === undefined
      ? undefined
      : Array.isArray(a.append_system_prompt)
        ? a.append_system_prompt
        : [a.append_system_prompt];
  let envelope: EnvelopeChoice | undefined;
  if (a.schema === true) envelope = { kind: "default" };
  else if (a.schema === false) envelope = { kind: "none" };
  else if (typeof a.schema === "string")
    envelope = { kind: "file", path: joinPath(named.dir, a.schema), label: `${named.file}: agents.${named.name}.schema` };
  return {
    agent: a.agent,
    model: a.model,
    thinking: a.thinking,
    tools: a.tools,
    "permission-mode": a.permission_mode,
    // A policy file in the config is relative to the config file.
    permissions: a.permissions === undefined ? undefined : joinPath(named.dir, a.permissions),
    "fail-on-refusal": a.fail_on_refusal,
    "max-turns": a.max_turns,
    "max-cost": a.max_cost === undefined ? undefined : Math.round(a.max_cost * 1e6),
    // An @FILE in the config is relative to the config file.
    "append-system-prompt": prompts?.map((p) => (p.startsWith("@") ? `@${joinPath(named.dir, p.slice(1))}` : p)),
    timeout: a.timeout === undefined ? undefined : a.timeout === 0 ? null : Math.round(a.timeout * 1000),
    stall: a.stall === undefined ? undefined : Math.round(a.stall * 1000),
    "tell-deadline": a.tell_deadline,
    grace: a.grace === undefined ? undefined : Math.round(a.grace * 1000),
    "tool-timeout": a.tool_timeout === undefined ? undefined : Math.round(a.tool_timeout * 1000),
    "max-tokens": a.budget?.max_tokens,
    budget: a.budget?.mode,
    "cache-read-weight": a.budget?.cache_read_weight,
    "budget-grace": a.budget?.grace === undefined ? undefined : Math.round(a.budget.grace * 1000),
    profile: a.profile,
    "require-ext": a.require_ext,
    envelope,
    nudges: a.nudges,
    gateway: a.gateway,
    direct: a.direct,
    "keep-stream": a.keep_stream,
    serve: a.serve,
    "expect-change": a.expect_change,
    "expect-file": a.expect_files,
    isolate: a.isolate,
    network: a.network,
    "acp-command": a.acp_command,
  };
}

// An empty value is no value, except where empty means something: no gateway prefix, no pass-through, an empty profile (no key from the env files).
export const given = (key: string, raw: FlagValue | undefined): raw is FlagValue =>
  raw !== undefined &&
  !(raw === "" && key !== "gateway" && key !== "profile") &&
  !(Array.isArray(raw) && raw.length === 0 && key !== "pass-through" && key !== "profile");

/** How a message names where a setting's value came from: its flag, variable, agentport.json field, or the session's birth request. */
export const settingLabel = (source: Source, key: SettingKey): string => {
  if (source === "file") return `${key.replace(/-/g, "_")} (agentport.json)`;
  if (source === "environment") return ENV_SETTINGS[key] ?? key;
  if (source === "session") return `the session's --${key}`;
  return `--${key}`;
};
