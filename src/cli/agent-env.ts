// The agent's environment as a run builds it: the env files read (the
// config's, then --env-file), the key rule applied (core/env-keys.ts), and
// any refused key a usage error before anything starts.
import { agentEnvironment, type EnvRefusal, type Env } from "../core/env.ts";
import { allowIssue } from "../core/env-keys.ts";
import type { AgentName } from "../core/agents.ts";
import { EnvFileError, readEnvFiles } from "../io/dotenv.ts";
import { withoutSecrets } from "../io/ledger-url.ts";
import { adapterOf } from "../agents/table.ts";
import { configPath, type LoadedConfig } from "../config/load.ts";
import { usageError } from "./errors.ts";
import { log } from "./output.ts";
import { LEDGER_ENV } from "./ledger-option.ts";

export interface EnvRequest {
  /** The env files, in order (a later file wins). */
  files: string[];
  /** The vault's keys; undefined: no profile. */
  profile: string[] | undefined;
  agent: AgentName;
  /** --env-allow. */
  allow: string[];
  /** The trusted config's env_allow. */
  configAllow?: string[];
}

/** The env files a (trusted) config names, absolute. */
export function configEnvFiles(config: LoadedConfig | null): string[] {
  const named = config?.config.env_file;
  if (named === undefined || config === null) return [];
  return (Array.isArray(named) ? named : [named]).map((path) => configPath(config, path));
}

function refusalLine(r: EnvRefusal, agent: AgentName): string {
  const where = `env file ${r.file}: ${r.key}`;
  switch (r.kind) {
    case "steering":
      return `${where} changes where the agent loads code or sends credentials: only the real environment may set it`;
    case "own":
      return `${where} is agentport's own: only the real environment may set it`;
    case "not_allowed":
      return `${where} is neither a credential (*_API_KEY, *_TOKEN, *_SECRET, *_PASSWORD, …) nor a setting ${agent} declares: allow it with --env-allow ${r.key} (or "env_allow" in agentport.json)`;
  }
}

/**
 * The agent's environment: the real one without agentport's own variables
 * (unless allowed by name), the env files' allowed keys, the vault rule for
 * `profile`. A refused key, or a name that cannot be allowed, is exit 2.
 */
export function agentEnv(request: EnvRequest): Env {
  const configAllow = request.configAllow ?? [];
  const issues = [
    ...configAllow.map((name) => allowIssue(name, "env_allow (agentport.json):")),
    ...request.allow.map((name) => allowIssue(name, "--env-allow")),
  ].filter((line) => line !== null);
  if (issues.length > 0) throw usageError(issues.join("\n"));
  let files: ReturnType<typeof readEnvFiles>;
  try {
    files = readEnvFiles(request.files);
  } catch (error) {
    if (error instanceof EnvFileError) throw usageError(error.message);
    throw error;
  }
  const allowed = new Set([...adapterOf(request.agent).envSettings, ...configAllow, ...request.allow]);
  const { env, missing, refused, taken } = agentEnvironment({ real: process.env, files, profile: request.profile, allowed });
  if (refused.length > 0) throw usageError(refused.map((r) => refusalLine(r, request.agent)).join("\n"));
  for (const file of taken) log.debug(`env file ${file.path}: ${file.keys.length > 0 ? file.keys.join(", ") : "no keys"}`);
  // Passed on by name, the ledger's URL still goes without its password.
  if (env[LEDGER_ENV] !== undefined) env[LEDGER_ENV] = withoutSecrets(env[LEDGER_ENV]);
  if (missing.length > 0)
    log.warn(
      `profile: ${missing.join(", ")} found neither in the environment nor in ${request.files.length > 0 ? request.files.join(", ") : "an env file (none given: --env-file FILE)"}`,
    );
  return env;
}
