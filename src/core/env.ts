// The agent's environment: the real one, the env files the user chose, and
// the vault rule. Pure.
//
// Env files are only those named by `--env-file FILE` or a trusted config's
// `env_file` (never a .env found in the folder), and the real environment
// always wins. A variable that changes how the agent loads code or where it
// sends credentials never comes from an env file: only the keys env-keys.ts
// allows do, and agentport's own variables stay with it. With a
// profile (`--profile KEY,...`) the env files become a vault: the agent gets
// the real environment minus every key they provided, plus only the named keys.

import { envFileKey, ownName, type RefusalKind } from "./env-keys.ts";

export type Env = Record<string, string | undefined>;

/** KEY=VALUE lines; `#` comments, `export ` prefixes and one layer of quotes are understood. */
export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#")) continue;
    const body = line.startsWith("export ") ? line.slice(7) : line;
    const eq = body.indexOf("=");
    if (eq <= 0) continue;
    const key = body.slice(0, eq).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) continue;
    let value = body.slice(eq + 1).trim();
    const quote = value[0];
    if ((quote === '"' || quote === "'") && value.length >= 2 && value.endsWith(quote)) value = value.slice(1, -1);
    else {
      const hash = value.indexOf(" #");
      if (hash >= 0) value = value.slice(0, hash).trimEnd();
    }
    out[key] = value;
  }
  return out;
}

/** One env file's variables, as read. */
export interface EnvFileValues {
  /** As the user or the config named it: how refusals name it. */
  path: string;
  values: Record<string, string>;
}

/** A key an env file may not set: which, from which file, and why. */
export interface EnvRefusal {
  key: string;
  file: string;
  kind: RefusalKind;
}

export interface AgentEnvInput {
  /** The real environment. */
  real: Env;
  /** The env files, in order (a later file wins); empty when none was chosen. */
  files: readonly EnvFileValues[];
  /** Keys the agent may have from the vault; undefined means no profile (inherit everything). */
  profile?: readonly string[];
  /** Names an env file may set beyond credentials (the agent's own settings, --env-allow, env_allow); also agentport's own variables passed on. */
  allowed: ReadonlySet<string>;
}

export interface AgentEnv {
  env: Env;
  /** Profile keys found nowhere: the run should say so. */
  missing: string[];
  /** Keys an env file tried to set that it may not: the run must not start. */
  refused: EnvRefusal[];
  /** Per file, the keys taken from it (never their values). */
  taken: { path: string; keys: string[] }[];
}

export function agentEnvironment(input: AgentEnvInput): AgentEnv {
  // agentport's own variables (its ledger, PG*) stay with agentport unless passed on by name.
  const real: Env = Object.fromEntries(Object.entries(input.real).filter(([key]) => !ownName(key) || input.allowed.has(key)));
  // With a profile only its keys are taken from the files; the rest stay in the vault.
  const wanted = (key: string) => input.profile === undefined || input.profile.includes(key);
  const files: Record<string, string> = {};
  const refused: EnvRefusal[] = [];
  const taken: AgentEnv["taken"] = [];
  for (const file of input.files) {
    const keys: string[] = [];
    for (const [key, value] of Object.entries(file.values)) {
      if (!wanted(key)) continue;
      const decision = envFileKey(key, input.allowed);
      if (!decision.taken) refused.push({ key, file: file.path, kind: decision.kind });
      else {
        files[key] = value;
        keys.push(key);
      }
    }
    taken.push({ path: file.path, keys });
  }
  const env: Env = { ...real };
  const missing: string[] = [];
  for (const key of input.profile ?? Object.keys(files)) {
    const value = real[key] ?? files[key];
    if (value === undefined) missing.push(key);
    else env[key] = value;
  }
  return { env, missing, refused, taken };
}
