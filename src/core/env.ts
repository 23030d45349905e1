// The agent's environment: the real one, a .env file, and the vault rule. Pure.
//
// A .env in the cwd is loaded and the real environment always wins. With a
// profile (`--profile KEY,...`) the .env becomes a vault: the agent gets the
// real environment minus every key the .env provided, plus only the named keys.

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

export interface AgentEnvInput {
  /** The real environment. */
  real: Env;
  /** What the .env file holds (empty when there is none). */
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
  // The vault: keys the .env provided that the real environment did not carry.
  const vault = Object.keys(input.dotenv).filter((key) => input.real[key] === undefined);
  const env: Env = { ...input.real };
  const missing: string[] = [];
  if (input.profile === undefined) {
    for (const key of vault) env[key] = input.dotenv[key];
  } else {
    for (const key of input.profile) {
      const value = input.real[key] ?? input.dotenv[key];
      if (value === undefined) missing.push(key);
      else env[key] = value;
    }
  }
  for (const [key, value] of Object.entries(input.extra ?? {})) env[key] = value;
  return { env, missing };
}
