// The agent's environment: the real one, the env files the user chose, and
// the vault rule. Pure.
//
// Env files are only those named by `--env-file FILE` or a trusted config's
// `env_file` (never a .env found in the folder), and the real environment
// always wins. A variable that changes how the agent loads code or where it
// sends credentials never comes from an env file (ENV_FILE_DENIED). With a
// profile (`--profile KEY,...`) the env files become a vault: the agent gets
// the real environment minus every key they provided, plus only the named keys.

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

// Code loading (NODE_OPTIONS, LD_PRELOAD, BASH_ENV…), where credentials go
// (*_BASE_URL, proxies, TLS checks, CA files) and where the agents and
// agentport keep their state: only the real environment may set these.
const ENV_FILE_DENIED: readonly RegExp[] = [
  /^NODE_OPTIONS$/,
  /^NODE_PATH$/,
  /^NODE_EXTRA_CA_CERTS$/,
  /^NODE_TLS_REJECT_UNAUTHORIZED$/,
  /^LD_/,
  /^DYLD_/,
  /^BASH_ENV$/,
  /^ENV$/,
  /^PATH$/,
  /_BASE_URL$/i,
  /_PROXY$/i,
  /^SSL_CERT_(?:FILE|DIR)$/,
  /^CLAUDE_CONFIG_DIR$/,
  /^PI_CODING_AGENT_DIR$/,
  /^AGENTPORT_/,
];

/** May an env file set this variable? No for what steers the agent's code or credentials. */
export function deniedFromEnvFile(name: string): boolean {
  return ENV_FILE_DENIED.some((pattern) => pattern.test(name));
}

export interface AgentEnvInput {
  /** The real environment. */
  real: Env;
  /** What the chosen env files hold (empty when none was chosen); denied names are dropped here too. */
  dotenv: Record<string, string>;
  /** Keys the agent may have from the vault; undefined means no profile (inherit everything). */
  profile?: string[];
  /** Set by agentport for this run; always passed. */
  extra?: Record<string, string>;
}

export interface AgentEnv {
  env: Env;
  /** Profile keys found nowhere: the run should say so. */
  missing: string[];
}

export function agentEnvironment(input: AgentEnvInput): AgentEnv {
  const files = Object.fromEntries(Object.entries(input.dotenv).filter(([key]) => !deniedFromEnvFile(key)));
  // The vault: keys the env files provided that the real environment did not carry.
  const vault = Object.keys(files).filter((key) => input.real[key] === undefined);
  const env: Env = { ...input.real };
  const missing: string[] = [];
  if (input.profile === undefined) {
    for (const key of vault) env[key] = files[key];
  } else {
    for (const key of input.profile) {
      const value = input.real[key] ?? files[key];
      if (value === undefined) missing.push(key);
      else env[key] = value;
    }
  }
  for (const [key, value] of Object.entries(input.extra ?? {})) env[key] = value;
  return { env, missing };
}
