// What `run`, `resume`, `config` and `bon` share: the settings resolved once
// (src/config/resolve.ts), then what they point at read from disk (the schema,
// system-prompt files, the env files: agent-env.ts), the agent's binary, the ledger.
import { existsSync, realpathSync, statSync } from "node:fs";
import { userJson } from "./user-file.ts";
import { resolve } from "node:path";
import { defaultEnvelopeJsonSchema, compileSchema, type JsonSchema } from "../core/envelope.ts";
import { agentEnv, configEnvFiles } from "./agent-env.ts";
import { MAX_WRITTEN_FILE_BYTES, readNamedFile } from "../io/named-file.ts";
import { stateHome } from "../io/paths.ts";
import { usageError } from "./errors.ts";
import { log } from "./output.ts";
import type { SupervisorOptions } from "../core/supervisor.ts";
import { CONFIG_FILE, unknownAgent, type NamedAgent } from "../config/schema.ts";
import { ConfigError, findConfig, lookupConfig, type IgnoredConfig, type LoadedConfig } from "../config/load.ts";
import { ignoredLine, type TrustRecords } from "../config/trust.ts";
import { commandLedger, ledgerChoice, ledgerFromConfig, type LedgerChoice } from "./ledger-option.ts";
import { TrustStoreError, trustRecords } from "../io/trust-store.ts";
import { readPolicy } from "./permissions-file.ts";
import {
  resolveSettings,
  settingLabel,
  type AgentKind,
  type EnvelopeChoice,
  type FlagRecord,
  type Settings,
  type Sources,
} from "../config/resolve.ts";
import { dirname } from "node:path";
import { birthRequest } from "../config/request.ts";
import { appendedSystemPrompt } from "../core/instructions.ts";
import { showArgv } from "./verdict-output.ts";
import { deadlineLine } from "../core/deadline.ts";
import type { AgentSetup, Common } from "../agents/setup.ts";
import { requestIssues, type RequestSetting, type SettingsRow } from "../agents/settings.ts";
import { adapterOf } from "../agents/table.ts";

export { agentArgs, promptArgs, rosterArgs } from "./agent-flags.ts";
export type { AgentSetup, Common } from "../agents/setup.ts";
export { openExistingLedger, openLedger } from "./ledger-option.ts";

type Args = Record<string, unknown>;
const str = (args: Args, key: string): string | undefined => (typeof args[key] === "string" ? (args[key] as string) : undefined);

/** An existing folder, absolute and with symlinks resolved (the birth-folder rule compares these). */
export function folder(path: string | undefined): string {
  const abs = resolve(path ?? ".");
  if (!existsSync(abs) || !statSync(abs).isDirectory()) throw usageError(`--cwd ${abs}: no such folder`);
  return realpathSync(abs);
}

/** The agent's row says agentport's supervisor enforces `setting` (else the agent does, or refuses it). */
function supervised(agent: AgentKind, setting: RequestSetting): boolean {
  const e = adapterOf(agent).settings[setting];
  return "how" in e && e.supervised === true;
}

export function supervisionOptions(s: Settings): SupervisorOptions {
  return {
    timeoutMs: s.timeoutMs ?? undefined,
    stallMs: s.stallMs ?? undefined,
    toolTimeoutMs: s.toolTimeoutMs ?? undefined,
    graceMs: s.graceMs ?? undefined,
    budget: s.budget,
    loopRepeat: s.loopRepeat,
    maxTurns: supervised(s.agent, "max-turns") ? (s.maxTurns ?? undefined) : undefined,
    maxCostMicroUsd: s.maxCostMicroUsd ?? undefined,
    expect: s.expectChange || s.expectFiles.length > 0 ? { change: s.expectChange, files: s.expectFiles } : undefined,
  };
}

function commonOptions(s: Settings, cwd: string, files: string[], configAllow: string[]): Common {
  const profile = s.profile ?? undefined;
  const env = agentEnv({ files, profile, agent: s.agent, allow: s.envAllow, configAllow });
  return {
    cwd,
    home: stateHome(s.home ?? undefined),
    maxLineBytes: s.maxLineBytes,
    supervision: supervisionOptions(s),
    onWarning: (text) => log.warn(text),
    lingerMs: s.lingerMs,
    profile,
    env,
    keepStream: s.keepStream,
    keepPrompt: s.keepPrompt,
  };
}

/** The envelope's JSON Schema: a schema file read and checked, the default, or null. */
function loadEnvelope(choice: EnvelopeChoice): JsonSchema | null {
  if (choice.kind === "none") return null;
  if (choice.kind === "default") return defaultEnvelopeJsonSchema();
  const { path, label } = choice;
  const named = label.startsWith("--") ? `${label} ${path}` : label;
  if (!existsSync(path)) throw usageError(label.startsWith("--") ? `${named}: no such file` : `${named}: no such file ${path}`);
  const schema = userJson(readNamedFile(path, MAX_WRITTEN_FILE_BYTES, named), named);
  const compiled = compileSchema(schema);
  if (!compiled.ok) throw usageError(`${named}: ${compiled.error}`);
  return schema as JsonSchema;
}

/** Each --append-system-prompt as text: an @FILE is read (a missing one is a usage error). */
function systemPromptTexts(values: readonly string[]): string[] {
  return values.map((value) => {
    if (!value.startsWith("@")) return value;
    const file = resolve(value.slice(1));
    return readNamedFile(file, MAX_WRITTEN_FILE_BYTES, `--append-system-prompt ${value}`);
  });
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
    const recorded = found?.origin === "found" ? homeTrust(args) : null;
    lookup = lookupConfig(cwd, str(args, "config"), recorded);
  } catch (error) {
    configError(error);
  }
  if (lookup.ignored !== null) log.warn(ignoredLine(lookup.ignored.path, lookup.ignored.trust, lookup.ignored.file));
  return lookup;
}

/** The trust records of the home (--home, $AGENTPORT_HOME, …): never a ledger's, which another home may write. An unreadable file trusts nothing, said in one line. */
function homeTrust(args: Args): TrustRecords | null {
  try {
    return trustRecords(stateHome(str(args, "home")));
  } catch (error) {
    if (!(error instanceof TrustStoreError)) throw error;
    log.warn(error.message);
    return null;
  }
}

/** The ledger choice of a command run here: its --ledger and --home, and the project config of the current folder. */
export async function projectLedger(args: Args): Promise<LedgerChoice> {
  return commandLedger(args, await projectConfig(args, process.cwd()));
}

/** The project config for a working folder, or null (see configLookup). */
export async function projectConfig(args: Args, cwd: string): Promise<LoadedConfig | null> {
  return (await configLookup(args, cwd)).loaded;
}

/** The ledger of a resolved run: --ledger, $AGENTPORT_LEDGER, the config's `ledger` (all in its settings), else the home's. */
export function setupLedger(setup: Pick<AgentSetup, "settings" | "common">): LedgerChoice {
  return ledgerChoice({ ledger: setup.settings.ledger ?? undefined }, setup.common.home, null);
}

/** The named agent `name` of the config, or a one-line error naming the file. */
export function namedAgent(loaded: LoadedConfig, name: string): NamedAgent {
  const agent = Object.hasOwn(loaded.config.agents, name) ? loaded.config.agents[name] : undefined;
  if (agent === undefined) throw usageError(`--as ${name}: ${unknownAgent(name, Object.keys(loaded.config.agents))} in ${loaded.path}`);
  return agent;
}

export interface SetupInput {
  /** citty's values, with repeatable flags as lists (see commandLine in flags.ts). */
  flags: Args;
  passThrough?: string[];
  /** The request a resumed session was born with. */
  session?: FlagRecord | null;
}

export interface SetupOptions {
  /** Use the config's default_agent when --as is not given (run: yes; resume: no). */
  useDefault?: boolean;
  /** The agent is fixed (a resume): a named agent of the other kind is an error. */
  agent?: AgentKind;
  /** The project config, loaded (and its trust checked) by the caller: projectConfig. */
  config: LoadedConfig | null;
  env?: Record<string, string | undefined>;
  /** How the caller runs the agent takes these settings otherwise than its row says (bon's pi over RPC takes --grace). */
  rowOf?: (agent: AgentKind) => Partial<SettingsRow>;
}

/** Settings, or a usage error listing every issue (one line each, exit 2, nothing started). */
export function settingsOf(
  input: SetupInput,
  cwd: string,
  options: SetupOptions,
): { settings: Settings; sources: Sources; config: LoadedConfig | null } {
  const config = options.config;
  const name = str(input.flags, "as") ?? (options.useDefault ? (config?.config.default_agent ?? null) : null);
  if (name !== null && config === null)
    throw usageError(`--as ${name}: no ${CONFIG_FILE} found from ${cwd} up to the repository root; give --config FILE`);
  const named =
    name === null || config === null ? null : { name, agent: namedAgent(config, name), file: config.path, dir: dirname(config.path) };
  const resolved = resolveSettings({
    flags: input.flags as FlagRecord,
    passThrough: input.passThrough,
    session: input.session,
    env: options.env ?? process.env,
    named,
    configLedger: ledgerFromConfig(config),
    agent: options.agent,
  });
  if (!resolved.ok) throw usageError(resolved.issues.join("\n"));
  const { agent } = resolved.settings;
  const row = { ...adapterOf(agent).settings, ...options.rowOf?.(agent) };
  const refused = requestIssues(agent, row, resolved.settings, resolved.sources, config?.config.prices ?? {});
  if (refused.length > 0) throw usageError(refused.join("\n"));
  return { settings: resolved.settings, sources: resolved.sources, config };
}

/**
 * Resolve the flags (and `--as NAME` or the default agent) into what a run
 * takes, then read what the settings point at. Tools, thinking and model stay
 * in the roster's words here and are translated by each runner.
 */
export function agentSetup(input: SetupInput, cwd: string, options: SetupOptions): AgentSetup {
  const { settings: s, sources, config } = settingsOf(input, cwd, options);
  const schema = loadEnvelope(s.envelope);
  // The request is stored with the session: a schema path made absolute here.
  if (s.envelope.kind === "file") s.envelope = { ...s.envelope, path: resolve(s.envelope.path) };
  if (s.permissions !== null) s.permissions = resolve(s.permissions);
  const permissions = s.permissions === null ? null : readPolicy(s.permissions, settingLabel(sources.permissions, "permissions"));
  // The config's env files first, then --env-file: a later file wins.
  const envFiles = [...configEnvFiles(config), ...s.envFiles];
  const common = commonOptions(s, cwd, envFiles, config?.config.env_allow ?? []);
  const opt = <T>(value: T | null): T | undefined => value ?? undefined;
  const adapter = adapterOf(s.agent);
  return {
    settings: s,
    sources,
    name: s.name,
    agent: s.agent,
    config,
    args: input.flags,
    common,
    schema,
    permissions,
    appendSystemPrompt: appendedSystemPrompt(
      [...systemPromptTexts(s.appendSystemPrompt), ...(s.tellDeadline && s.timeoutMs !== null ? [deadlineLine(s.timeoutMs)] : [])].join(
        "\n\n",
      ),
      null,
    ),
    envFiles,
    model: opt(s.model),
    tools: opt(s.tools),
    thinking: opt(s.thinking),
    nudges: s.nudges,
    onArgv: showArgv,
    request: { ...birthRequest(s), ...(s.model && adapter.modelRoute ? { route: adapter.modelRoute(s.model, s) } : {}) },
    pi: {
      gateway: s.gateway,
      direct: s.direct,
      thinking: opt(s.thinking),
      tools: opt(s.tools),
      requireExt: s.requireExt,
      sessionDir: resolve(s.sessionDir ?? `${common.home}/pi-sessions`),
    },
  };
}
