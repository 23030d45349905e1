// What `run` and `resume` share: agent options, the environment, the ledger.
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { DEFAULT_MAX_LINE_BYTES } from "../core/frame.ts";
import { agentEnvironment, type Env } from "../core/env.ts";
import { defaultEnvelopeJsonSchema, compileSchema, type JsonSchema } from "../core/envelope.ts";
import { EnvFileError, readEnvFiles } from "../io/dotenv.ts";
import type { Ledger } from "../io/ledger.ts";
import { stateHome } from "../io/paths.ts";
import { resolveBin } from "../agents/resolve-bin.ts";
import { probePi } from "../agents/pi-probe.ts";
import type { PiCapabilities } from "../core/pi/capabilities.ts";
import { DEFAULT_GATEWAY } from "../agents/pi-argv.ts";
import { environmentError, usageError } from "./errors.ts";
import { list, outputArgs, positiveInt, seconds, verbosityArgs } from "./common.ts";
import { log } from "./output.ts";
import { parseBudgetOptions } from "../core/budget.ts";
import { DEFAULT_LOOP_REPEAT } from "../core/loop-detector.ts";
import type { SupervisorOptions } from "../core/supervisor.ts";
import { isThinkingLevel, THINKING_LEVELS, type ThinkingLevel } from "../core/translate.ts";
import { CONFIG_FILE, DEFAULT_NUDGES, MAX_NUDGES } from "../config/schema.ts";
import { ConfigError, configPath, findConfig, lookupConfig, type IgnoredConfig, type LoadedConfig } from "../config/load.ts";
import { ignoredLine, type TrustRecords } from "../config/trust.ts";
import { DEFAULT_AGENT, envArgs, layer, namedAgent, namedAgentArgs, type Layered } from "../config/resolve.ts";
import { ledgerArgs, ledgerChoice, ledgerFromConfig, openExistingLedger } from "./ledger-option.ts";
import { AGENT_NAMES, isAgentName, type AgentName } from "../core/agents.ts";
import { BIN_ARGS } from "../agents/table.ts";

export { openExistingLedger, openLedger } from "./ledger-option.ts";

/** The roster's flags: a command that spreads these resolves its options with agentSetup (run, resume, config). */
export const rosterArgs = {
  as: { type: "string" as const, valueHint: "NAME", description: "Use this named agent of agentport.json (flags override its values)" },
  config: { type: "string" as const, valueHint: "FILE", description: `The project config (else $AGENTPORT_CONFIG, else the nearest ${CONFIG_FILE} from --cwd up to the repository root)` },
  nudges: { type: "string" as const, valueHint: "N", description: `When a turn ends without its envelope, ask for it up to N times in the same session (default ${DEFAULT_NUDGES}, at most ${MAX_NUDGES}), then fail with "no envelope after N nudges"` },
};

export const agentArgs = {
  model: { type: "string" as const, description: "Model id (pi: turned into a route with the gateway prefix unless --direct; claude: the provider prefix is dropped)" },
  cwd: { type: "string" as const, description: "Folder the agent works in (default: the current folder)" },
  tools: { type: "string" as const, valueHint: "a,b", description: "Allowed tools, comma-separated, in pi's words (read, bash, edit, write, grep, find, ls) or Claude Code's; translated for the agent" },
  thinking: { type: "string" as const, valueHint: "LEVEL", description: `Thinking: ${THINKING_LEVELS.join(", ")} (pi: --thinking, max is xhigh; claude: MAX_THINKING_TOKENS)` },
  timeout: { type: "string" as const, valueHint: "S", description: "Stop the agent after S seconds, on the monotonic or the wall clock (status timeout, exit 4)" },
  stall: { type: "string" as const, valueHint: "S", description: "Stop the agent after S seconds without output (status stalled, exit 4)" },
  "max-tokens": { type: "string" as const, valueHint: "N", description: "Token budget: input + output + cache writes + W × cache reads (off by default)" },
  budget: { type: "string" as const, valueHint: "warn|enforce", description: "With --max-tokens: warn once, or stop after the grace (default enforce; status over_budget, exit 4)" },
  "cache-read-weight": { type: "string" as const, valueHint: "W", description: "Weight of cache reads in the budget (default 0.1)" },
  "budget-grace": { type: "string" as const, valueHint: "S", description: "Seconds over budget before enforce stops the run (default 240)" },
  "loop-repeat": { type: "string" as const, valueHint: "K", description: "Stop after the same tool call K times in a row, an A-B ping-pong or the same text repeated (default 5; status looping, exit 4)" },
  loop: { type: "string" as const, valueHint: "on|off", description: "Loop detection (default on)" },
  linger: { type: "string" as const, valueHint: "S", description: "End an agent still alive S seconds after its result (default 10)" },
  schema: { type: "string" as const, valueHint: "FILE", description: "Require an envelope matching this JSON Schema (pi: the report_phase tool; claude: a fenced json block)" },
  envelope: { type: "boolean" as const, description: "Require the default envelope {status, summary, changed_files}" },
  "require-ext": { type: "string" as const, valueHint: "a,b", description: "pi extensions that must be proven loaded (fails closed)" },
  "session-dir": { type: "string" as const, description: "pi session folder (default: <home>/pi-sessions)" },
  gateway: { type: "string" as const, description: `pi route prefix for --model (default ${DEFAULT_GATEWAY}, else $AGENTPORT_GATEWAY; "" for none)` },
  direct: { type: "boolean" as const, description: "Send --model to pi as is (it already is a route)" },
  "env-file": { type: "string" as const, valueHint: "FILE", description: "Read variables for the agent from FILE (repeatable; later files win, the real environment wins over all). Never NODE_OPTIONS, LD_*, *_BASE_URL, proxies and the like: those only from the real environment" },
  profile: { type: "string" as const, valueHint: "KEY,KEY", description: "Vault mode: the agent gets the real environment minus the env files' keys, plus only these" },
  "permission-mode": { type: "string" as const, valueHint: "MODE", description: "default, acceptEdits, plan, bypassPermissions or dontAsk (claude: as is; codex: its --sandbox; gemini: its --approval-mode; pi has none: use --tools)" },
  ...BIN_ARGS,
  home: { type: "string" as const, description: "State folder (else $AGENTPORT_HOME, $XDG_STATE_HOME/agentport, ~/.local/state/agentport)" },
  "keep-stream": { type: "string" as const, valueHint: "on|off", description: "Keep the agent's stdout in the run folder's stream.jsonl, for replay (default on)" },
  "keep-prompt": { type: "boolean" as const, description: "Keep the prompt in the run folder's prompt.txt (else only its sha256 and size in argv.json)" },
  ...ledgerArgs,
  ...outputArgs,
  ...verbosityArgs,
};

type Args = Record<string, unknown>;
const str = (args: Args, key: string): string | undefined => (typeof args[key] === "string" ? (args[key] as string) : undefined);

/** An existing folder, absolute and with symlinks resolved (the birth-folder rule compares these). */
export function folder(path: string | undefined): string {
  const abs = resolve(path ?? ".");
  if (!existsSync(abs) || !statSync(abs).isDirectory()) throw usageError(`--cwd ${abs}: no such folder`);
  return realpathSync(abs);
}

export interface Common {
  cwd: string;
  home: string;
  maxLineBytes: number;
  supervision: SupervisorOptions;
  onWarning: (text: string) => void;
  lingerMs: number;
  profile?: string[];
  env: Env;
  keepStream: boolean;
  keepPrompt: boolean;
}

/** `--env-file` as given: one string from citty, or every one (withEnvFiles, agentSetup). */
export function envFiles(args: Args): string[] {
  const value = args["env-file"];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string" && v !== "");
  return typeof value === "string" && value !== "" ? [value] : [];
}

/** The env files' variables; --verbose names the keys taken from each (never a value). */
function envFileValues(paths: string[]): Record<string, string> {
  let read: ReturnType<typeof readEnvFiles>;
  try {
    read = readEnvFiles(paths);
  } catch (error) {
    if (error instanceof EnvFileError) throw usageError(error.message);
    throw error;
  }
  for (const file of read.files) {
    log.debug(`env file ${file.path}: ${file.taken.length > 0 ? file.taken.join(", ") : "no keys"}`);
    if (file.denied.length > 0) log.warn(`env file ${file.path}: ignored ${file.denied.join(", ")} (only the real environment may set these)`);
  }
  return read.values;
}

/** Lines agentport will frame: bounded so a typo cannot ask for gigabytes. */
export const MAX_MAX_LINE_BYTES = 256 * 1024 * 1024;

/** The agent's environment: the real one, the env files of `args`, the vault rule for `profile`; a profile key found nowhere is said. */
export function profileEnvironment(args: Args, profile: string[] | undefined): Env {
  const files = envFiles(args);
  const { env, missing } = agentEnvironment({ real: process.env, dotenv: envFileValues(files), profile });
  if (missing.length > 0) log.warn(`profile: ${missing.join(", ")} found neither in the environment nor in ${files.length > 0 ? files.join(", ") : "an env file (none given: --env-file FILE)"}`);
  return env;
}

export function commonOptions(args: Args, cwd: string): Common {
  const profile = list(args.profile);
  const env = profileEnvironment(args, profile);
  const maxLineBytes = positiveInt("max-line-bytes", args["max-line-bytes"], DEFAULT_MAX_LINE_BYTES);
  if (maxLineBytes > MAX_MAX_LINE_BYTES) throw usageError(`--max-line-bytes must be at most ${MAX_MAX_LINE_BYTES} (256 MiB), got "${args["max-line-bytes"]}"`);
  return {
    cwd,
    home: stateHome(str(args, "home")),
    maxLineBytes,
    supervision: supervisionOptions(args),
    onWarning: (text) => log.warn(text),
    lingerMs: seconds("linger", args.linger) ?? 10_000,
    profile,
    env,
    keepStream: onOff("keep-stream", args["keep-stream"], true),
    keepPrompt: args["keep-prompt"] === true,
  };
}

/** An on|off flag; anything else is a usage error naming the flag. */
function onOff(flag: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === "on" || value === true) return true;
  if (value === "off" || value === false) return false;
  throw usageError(`--${flag} must be on or off, got "${String(value)}"`);
}

export function supervisionOptions(args: Args): SupervisorOptions {
  const budget = parseBudgetOptions({
    maxTokens: str(args, "max-tokens"),
    budget: str(args, "budget"),
    cacheReadWeight: str(args, "cache-read-weight"),
    budgetGrace: str(args, "budget-grace"),
  });
  if (!budget.ok) throw usageError(budget.error);
  const loop = str(args, "loop") ?? "on";
  if (loop !== "on" && loop !== "off") throw usageError(`--loop must be on or off, got "${loop}"`);
  const repeat = positiveInt("loop-repeat", args["loop-repeat"], DEFAULT_LOOP_REPEAT);
  if (repeat < 2) throw usageError(`--loop-repeat must be at least 2, got "${repeat}"`);
  return {
    timeoutMs: seconds("timeout", args.timeout),
    stallMs: seconds("stall", args.stall),
    budget: budget.options,
    loopRepeat: loop === "off" ? null : repeat,
  };
}

/** The envelope's JSON Schema: --schema FILE, the default with --envelope, else null. */
export function envelopeSchema(args: Args): JsonSchema | null {
  const file = str(args, "schema");
  if (file !== undefined) {
    if (!existsSync(file)) throw usageError(`--schema ${file}: no such file`);
    let schema: unknown;
    try {
      schema = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      throw usageError(`--schema ${file}: not JSON (${(error as Error).message})`);
    }
    const compiled = compileSchema(schema);
    if (!compiled.ok) throw usageError(`--schema ${file}: ${compiled.error}`);
    return schema as JsonSchema;
  }
  return args.envelope ? defaultEnvelopeJsonSchema() : null;
}

export function piBin(args: Args): string {
  const bin = resolveBin("pi", str(args, "pi-bin"), "AGENTPORT_PI_BIN");
  if (!bin.ok) throw environmentError(bin.reason);
  return bin.path;
}

export function claudeBin(args: Args): string {
  const bin = resolveBin("claude", str(args, "claude-bin"), "AGENTPORT_CLAUDE_BIN");
  if (!bin.ok) throw environmentError(bin.reason);
  return bin.path;
}

export async function piCapabilities(bin: string, ledger: Ledger, env: Env): Promise<PiCapabilities> {
  try {
    return await probePi(bin, ledger, env);
  } catch (error) {
    throw environmentError(`pi probe: ${(error as Error).message}`);
  }
}

export function piOptions(args: Args, home: string) {
  const gateway = str(args, "gateway") ?? process.env.AGENTPORT_GATEWAY ?? DEFAULT_GATEWAY;
  const dir = str(args, "session-dir");
  return {
    gateway,
    direct: Boolean(args.direct),
    thinking: thinkingLevel(args),
    tools: list(args.tools),
    requireExt: list(args["require-ext"]) ?? [],
    sessionDir: resolve(dir ?? `${home}/pi-sessions`),
  };
}

export function thinkingLevel(args: Args): ThinkingLevel | undefined {
  const value = str(args, "thinking");
  if (value === undefined || value === "") return undefined;
  if (!isThinkingLevel(value)) throw usageError(`--thinking must be one of ${THINKING_LEVELS.join(", ")}, got "${value}"`);
  return value;
}

export function nudgeCount(args: Args): number {
  const value = str(args, "nudges");
  if (value === undefined || value.trim() === "") return DEFAULT_NUDGES;
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || n > MAX_NUDGES) throw usageError(`--nudges must be a whole number from 0 to ${MAX_NUDGES}, got "${value}"`);
  return n;
}

/** The env files a (trusted) config names, absolute. */
function configEnvFiles(config: LoadedConfig | null): string[] {
  const named = config?.config.env_file;
  if (named === undefined || config === null) return [];
  return (Array.isArray(named) ? named : [named]).map((path) => configPath(config, path));
}

/** A config problem as the CLI reports it: one line, exit 2. */
export function configError(error: unknown): never {
  if (error instanceof ConfigError) throw usageError(error.message);
  throw error;
}

/**
 * The project config for a working folder (--config, $AGENTPORT_CONFIG, or
 * found and trusted), and the found one that is ignored because it is not
 * trusted: that one is said in one line on stderr.
 */
export async function configLookup(args: Args, cwd: string): Promise<{ loaded: LoadedConfig | null; ignored: IgnoredConfig | null }> {
  let lookup: ReturnType<typeof lookupConfig>;
  try {
    const found = findConfig(cwd, str(args, "config"));
    const recorded = found?.origin === "found" ? await recordedTrust(args, found.path) : null;
    lookup = lookupConfig(cwd, str(args, "config"), recorded);
  } catch (error) {
    configError(error);
  }
  if (lookup.ignored !== null) log.warn(ignoredLine(lookup.ignored.path, lookup.ignored.trust));
  return lookup;
}

/**
 * The sha256 recorded as trusted for `path`, read without creating or writing
 * the ledger: the ledger of the flags, the environment or the home, never the
 * one the config being checked would name.
 */
async function recordedTrust(args: Args, path: string): Promise<TrustRecords> {
  await using ledger = await openExistingLedger(ledgerChoice(args, stateHome(str(args, "home")), null), { readonly: true });
  const sha = (await ledger?.trustedConfig(path))?.sha256 ?? null;
  return { trustedSha256: (asked) => (asked === path ? sha : null) };
}

/** The project config for a working folder, or null (see configLookup). */
export async function projectConfig(args: Args, cwd: string): Promise<LoadedConfig | null> {
  return (await configLookup(args, cwd)).loaded;
}

/** Everything a run needs from its flags and the named agent: the seam `run`, `resume` and `bon` share. */
export interface AgentSetup {
  /** The named agent, when one is used (--as, or the config's default_agent). */
  name: string | null;
  agent: AgentName;
  config: LoadedConfig | null;
  /** The flags with the environment and the named agent filled in: what the parsers below read. */
  args: Args;
  sources: Layered["sources"];
  common: Common;
  schema: JsonSchema | null;
  model?: string;
  tools?: string[];
  thinking?: ThinkingLevel;
  nudges: number;
  pi: ReturnType<typeof piOptions>;
}

export interface SetupOptions {
  /** Use the config's default_agent when --as is not given (run: yes; resume: no). */
  useDefault?: boolean;
  /** The agent is fixed (a resume): a named agent of the other kind is an error. */
  agent?: AgentName;
  /** The project config, loaded (and its trust checked) by the caller: projectConfig. */
  config: LoadedConfig | null;
  env?: Record<string, string | undefined>;
}

/**
 * The seam for other commands (bon): one named agent of the project config,
 * with flag-shaped overrides (`{ model: "a/b", timeout: "60" }`), as the
 * options `run` uses; `runSetup` (commands/run.ts) runs it one-shot, and an
 * RPC caller translates it with `translate(setup.agent, setup)` (core/translate.ts).
 */
export function namedAgentSetup(name: string, cwd: string, overrides: Args, config: LoadedConfig | null): AgentSetup {
  return agentSetup({ ...overrides, as: name }, cwd, { config });
}

/**
 * Resolve the flags (and `--as NAME` or the default agent) into the options a
 * run takes. flag > environment > named agent > default; tools, thinking and
 * model stay in the roster's words here and are translated by each runner.
 */
export function agentSetup(args: Args, cwd: string, options: SetupOptions): AgentSetup {
  const config = options.config;
  const asked = str(args, "as");
  const name = asked ?? (options.useDefault ? (config?.config.default_agent ?? null) : null);
  let file: Record<string, string | boolean> = {};
  if (name !== null) {
    if (config === null) throw usageError(`--as ${name}: no ${CONFIG_FILE} found from ${cwd} up to the repository root; give --config FILE`);
    try {
      file = namedAgentArgs(config, name);
      if (options.agent !== undefined && namedAgent(config, name).agent !== options.agent) {
        throw usageError(`--as ${name}: it is a ${namedAgent(config, name).agent} agent, and this session is ${options.agent}'s`);
      }
    } catch (error) {
      configError(error);
    }
  }
  // The config's ledger is a setting of the file, whichever agent runs.
  const ledger = ledgerFromConfig(config);
  if (ledger !== undefined && file.ledger === undefined) file = { ...file, ledger };
  const layered = layer(args, envArgs(options.env ?? process.env), file);
  const merged = layered.args;
  // The config's env files first, then --env-file: a later file wins.
  merged["env-file"] = [...configEnvFiles(config), ...envFiles(args)];
  const kind = options.agent ?? str(merged, "agent") ?? DEFAULT_AGENT;
  if (!isAgentName(kind)) throw usageError(`--agent must be one of ${AGENT_NAMES.join(", ")}, got "${kind}"`);
  const common = commonOptions(merged, cwd);
  return {
    name,
    agent: kind,
    config,
    args: merged,
    sources: layered.sources,
    common,
    schema: envelopeSchema(merged),
    model: str(merged, "model"),
    tools: list(merged.tools),
    thinking: thinkingLevel(merged),
    nudges: nudgeCount(merged),
    pi: piOptions(merged, common.home),
  };
}
