// Where each run option comes from: a flag, else the environment, else the
// named agent in agentport.json, else agentport's default. The layers are
// merged into the same flag-shaped record `run` reads, so a named agent and
// the flags it stands for go through one parser; the sources are kept for
// `agentport config`.
import { existsSync, readFileSync } from "node:fs";
import { compileSchema } from "../core/envelope.ts";
import { ConfigError, configPath, type LoadedConfig } from "./load.ts";
import { DEFAULT_NUDGES, unknownAgent, type NamedAgent } from "./schema.ts";

export type Source = "default" | "file" | "environment" | "flag";

/** Flag-shaped values: what citty hands over for these options. */
export type FlagValue = string | boolean;
export type FlagRecord = Record<string, FlagValue>;

/** The options a named agent can set, and the environment variables that can too, by flag name. */
export const SETTING_KEYS = [
  "agent",
  "model",
  "thinking",
  "tools",
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
] as const;
export type SettingKey = (typeof SETTING_KEYS)[number];

/** Environment variables that stand for a flag. */
export const ENV_SETTINGS: Partial<Record<SettingKey, string>> = {
  home: "AGENTPORT_HOME",
  ledger: "AGENTPORT_LEDGER",
  gateway: "AGENTPORT_GATEWAY",
  "pi-bin": "AGENTPORT_PI_BIN",
  "claude-bin": "AGENTPORT_CLAUDE_BIN",
};

export function envArgs(env: Record<string, string | undefined>): FlagRecord {
  const out: FlagRecord = {};
  for (const [key, variable] of Object.entries(ENV_SETTINGS)) {
    const value = env[variable];
    // AGENTPORT_GATEWAY="" is a value (no prefix); the others are unset when empty.
    if (value !== undefined && (value !== "" || key === "gateway")) out[key] = value;
  }
  return out;
}

/** The named agent `name` of the config, or a one-line error naming the file. */
export function namedAgent(loaded: LoadedConfig, name: string): NamedAgent {
  const agent = Object.hasOwn(loaded.config.agents, name) ? loaded.config.agents[name] : undefined;
  if (agent === undefined) throw new ConfigError(`--as ${name}: ${unknownAgent(name, Object.keys(loaded.config.agents))} in ${loaded.path}`);
  return agent;
}

/** A named agent as the flags it stands for; its schema file is checked here, so an error names the config. */
export function namedAgentArgs(loaded: LoadedConfig, name: string): FlagRecord {
  const a = namedAgent(loaded, name);
  const out: FlagRecord = { agent: a.agent };
  const set = (key: SettingKey, value: FlagValue | undefined) => {
    if (value !== undefined) out[key] = value;
  };
  set("model", a.model);
  set("thinking", a.thinking);
  set("tools", a.tools?.join(","));
  set("timeout", a.timeout?.toString());
  set("stall", a.stall?.toString());
  set("max-tokens", a.budget?.max_tokens.toString());
  set("budget", a.budget?.mode);
  set("cache-read-weight", a.budget?.cache_read_weight?.toString());
  set("budget-grace", a.budget?.grace?.toString());
  set("profile", a.profile?.join(","));
  set("require-ext", a.require_ext?.join(","));
  set("nudges", a.nudges?.toString());
  set("gateway", a.gateway);
  set("direct", a.direct);
  set("keep-stream", a.keep_stream === undefined ? undefined : a.keep_stream ? "on" : "off");
  if (a.schema === true) out.envelope = true;
  else if (typeof a.schema === "string") {
    const file = configPath(loaded, a.schema);
    const field = `${loaded.path}: agents.${name}.schema`;
    if (!existsSync(file)) throw new ConfigError(`${field}: no such file ${file}`);
    let schema: unknown;
    try {
      schema = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      throw new ConfigError(`${field}: ${file} is not JSON (${(error as Error).message.split("\n")[0]})`);
    }
    const compiled = compileSchema(schema);
    if (!compiled.ok) throw new ConfigError(`${field}: ${file}: ${compiled.error}`);
    out.schema = file;
  }
  return out;
}

export interface Layered {
  /** The flags as given, with every unset setting filled from the environment, then the named agent. */
  args: Record<string, unknown>;
  /** Where each setting that has a value came from. */
  sources: Partial<Record<SettingKey, Exclude<Source, "default">>>;
}

const given = (value: unknown): value is FlagValue => typeof value === "string" || typeof value === "boolean";

/** flag > environment > file. Defaults are left to the parsers (and shown by `agentport config`). */
export function layer(flags: Record<string, unknown>, env: FlagRecord, file: FlagRecord): Layered {
  const args: Record<string, unknown> = { ...flags };
  const sources: Layered["sources"] = {};
  // --schema and --envelope are one choice: a flag for either replaces the named agent's.
  const envelopeFlag = given(flags.schema) || given(flags.envelope);
  for (const key of SETTING_KEYS) {
    if (given(flags[key])) sources[key] = "flag";
    else if (given(env[key])) {
      args[key] = env[key];
      sources[key] = "environment";
    } else if (given(file[key]) && !(envelopeFlag && (key === "schema" || key === "envelope"))) {
      args[key] = file[key];
      sources[key] = "file";
    }
  }
  return { args, sources };
}

export const DEFAULT_AGENT = "claude";
export { DEFAULT_NUDGES };
