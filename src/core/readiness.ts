// Can an agent start a run here, at zero tokens: the credentials it would read
// (environment variables, its own login file, a configured gateway) and
// whether its version is one agentport was tested with. Names only, never
// values. Pure: the environment and a file test are given.
//
// Where each agent looks, read from the agents themselves (claude 2.1.197,
// codex 0.169.0, gemini 0.61.0, opencode 1.18.33, pi 0.73.1).
import type { AgentName } from "./agents.ts";

/** The versions agentport's suites ran against (test/peers/package.json, the root devDependencies), lowest and highest, inclusive; a shorter high covers its patches (0.85 is every 0.85.x). acp is a protocol, not one agent: no version of its own (null). */
export const TESTED: Readonly<Record<AgentName, Tested>> = {
  claude: { low: "2.1.197", high: "2.1.197" },
  pi: { low: "0.73.1", high: "0.85" },
  codex: { low: "0.169.0", high: "0.169.0" },
  gemini: { low: "0.61.0", high: "0.61.0" },
  opencode: { low: "1.18.33", high: "1.18.33" },
  acp: null,
};

const parts = (v: string): number[] => v.split(".").map((p) => Number.parseInt(p, 10) || 0);

/** a < b: -1, equal on b's components: 0, a > b: 1. */
function compare(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < y.length; i++) if ((x[i] ?? 0) !== y[i]) return (x[i] ?? 0) < y[i]! ? -1 : 1;
  return 0;
}

export type VersionFit = "tested" | "older" | "newer" | "unknown";

export type Tested = { low: string; high: string } | null;

/** Where `version` (x.y.z, from the agent's --version) lies against the tested range. */
export function versionFit(tested: Tested, version: string | undefined): VersionFit {
  const found = version === undefined ? null : /\d+\.\d+\.\d+/.exec(version);
  if (found === null || tested === null) return "unknown";
  const { low, high } = tested;
  if (compare(found[0], low) < 0) return "older";
  if (compare(found[0], high) > 0) return "newer";
  return "tested";
}

export type Env = Readonly<Record<string, string | undefined>>;

export interface Credentials {
  /** What was found: variable names, and login files as `~/…` paths. */
  found: string[];
  /** Enough of them for a run to start. */
  enough: boolean;
  /** How to provide some, when there are none. */
  fix: string;
  /** Something to know though there are enough (pi: the gateway's key is not among them). */
  note?: string;
}

const set = (env: Env, name: string): boolean => (env[name] ?? "") !== "";
const join = (dir: string, ...names: string[]): string => [dir.replace(/\/+$/, ""), ...names].join("/");
const tilde = (env: Env, dir: string): string => (dir.startsWith("~/") ? join(env.HOME ?? "", dir.slice(2)) : dir);

/** The provider keys pi reads (pi-ai's env-api-keys.js), by provider: the gateway picks which one a routed model needs. */
const PI_KEYS: Readonly<Record<string, string[]>> = {
  anthropic: ["ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"],
  openai: ["OPENAI_API_KEY"],
  google: ["GEMINI_API_KEY"],
  openrouter: ["OPENROUTER_API_KEY"],
  "vercel-ai-gateway": ["AI_GATEWAY_API_KEY"],
  groq: ["GROQ_API_KEY"],
  xai: ["XAI_API_KEY"],
  deepseek: ["DEEPSEEK_API_KEY"],
  mistral: ["MISTRAL_API_KEY"],
  cerebras: ["CEREBRAS_API_KEY"],
  zai: ["ZAI_API_KEY"],
  opencode: ["OPENCODE_API_KEY"],
  "github-copilot": ["COPILOT_GITHUB_TOKEN"],
};

/** The provider keys opencode reads from models.dev's list (the common ones). */
const OPENCODE_KEYS = [
  "ANTHROPIC_API_KEY",
  "OPENAI_API_KEY",
  "OPENROUTER_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_GENERATIVE_AI_API_KEY",
  "OPENCODE_API_KEY",
  "GROQ_API_KEY",
  "DEEPSEEK_API_KEY",
  "MISTRAL_API_KEY",
  "XAI_API_KEY",
];

/** A login file that holds something: a JSON object with a value that is not empty (pi and opencode write `{}` before any login). */
export function holdsLogin(json: unknown): boolean {
  if (json === null || typeof json !== "object" || Array.isArray(json)) return false;
  return Object.values(json).some((v) => v !== null && v !== "" && !(typeof v === "object" && Object.keys(v).length === 0));
}

/**
 * The credentials an agent would find in `env` and its files (`filled` says
 * whether a login file holds a login: holdsLogin of its JSON); `gateway` is
 * pi's route prefix (agentport's --gateway), whose provider key a routed model
 * needs. Each agent's row of the adapter table names its own (doctor).
 */
export type CredentialsCheck = (env: Env, filled: (path: string) => boolean, gateway: string) => Credentials;

const named = (env: Env, names: readonly string[]) => names.filter((n) => set(env, n));
const file = (filled: (path: string) => boolean, path: string, shown: string) => (filled(path) ? [shown] : []);

export const acpCredentials: CredentialsCheck = () => ({
  found: [],
  enough: true,
  fix: "",
  note: "an ACP agent's credentials are its own (see the command given to --acp-command)",
});

export const claudeCredentials: CredentialsCheck = (env, filled) => {
  const dir = env.CLAUDE_CONFIG_DIR || join(env.HOME ?? "", ".claude");
  const found = [
    ...named(env, [
      "ANTHROPIC_API_KEY",
      "CLAUDE_CODE_OAUTH_TOKEN",
      "ANTHROPIC_AUTH_TOKEN",
      "CLAUDE_CODE_USE_BEDROCK",
      "CLAUDE_CODE_USE_VERTEX",
      "CLAUDE_CODE_USE_FOUNDRY",
    ]),
    ...file(
      filled,
      join(dir, ".credentials.json"),
      env.CLAUDE_CONFIG_DIR ? "$CLAUDE_CONFIG_DIR/.credentials.json" : "~/.claude/.credentials.json",
    ),
  ];
  return {
    found: [...found, ...named(env, ["ANTHROPIC_BASE_URL"])],
    enough: found.length > 0,
    fix: "set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`), or log in once with `claude` (it writes ~/.claude/.credentials.json)",
  };
};

export const codexCredentials: CredentialsCheck = (env, filled) => {
  const dir = env.CODEX_HOME || join(env.HOME ?? "", ".codex");
  const found = [
    ...named(env, ["OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_ACCESS_TOKEN"]),
    ...file(filled, join(dir, "auth.json"), env.CODEX_HOME ? "$CODEX_HOME/auth.json" : "~/.codex/auth.json"),
  ];
  return {
    found: [...found, ...named(env, ["OPENAI_BASE_URL"])],
    enough: found.length > 0,
    fix: "set OPENAI_API_KEY or CODEX_API_KEY, or log in once with `codex login` (it writes ~/.codex/auth.json)",
  };
};

export const geminiCredentials: CredentialsCheck = (env, filled) => {
  const oauth = file(
    filled,
    join(env.GEMINI_CLI_HOME || (env.HOME ?? ""), ".gemini", "oauth_creds.json"),
    env.GEMINI_CLI_HOME ? "$GEMINI_CLI_HOME/.gemini/oauth_creds.json" : "~/.gemini/oauth_creds.json",
  );
  const vertex =
    env.GOOGLE_GENAI_USE_VERTEXAI === "true" &&
    (set(env, "GOOGLE_API_KEY") ||
      (set(env, "GOOGLE_CLOUD_PROJECT") && set(env, "GOOGLE_CLOUD_LOCATION")) ||
      set(env, "GOOGLE_APPLICATION_CREDENTIALS"));
  const enough =
    set(env, "GEMINI_API_KEY") ||
    set(env, "GOOGLE_GEMINI_BASE_URL") ||
    oauth.length > 0 ||
    vertex ||
    (env.GOOGLE_GENAI_USE_GCA === "true" && set(env, "GOOGLE_CLOUD_ACCESS_TOKEN")) ||
    env.CLOUD_SHELL === "true" ||
    env.GEMINI_CLI_USE_COMPUTE_ADC === "true";
  const found = [
    ...named(env, [
      "GEMINI_API_KEY",
      "GOOGLE_API_KEY",
      "GOOGLE_APPLICATION_CREDENTIALS",
      "GOOGLE_GENAI_USE_VERTEXAI",
      "GOOGLE_GEMINI_BASE_URL",
      "GOOGLE_GENAI_USE_GCA",
    ]),
    ...oauth,
  ];
  return {
    found,
    enough,
    fix: "set GEMINI_API_KEY (or GOOGLE_GENAI_USE_VERTEXAI=true with GOOGLE_API_KEY or GOOGLE_CLOUD_PROJECT and GOOGLE_CLOUD_LOCATION), or log in once with `gemini` (it writes ~/.gemini/oauth_creds.json)",
  };
};

export const opencodeCredentials: CredentialsCheck = (env, filled) => {
  const data = env.XDG_DATA_HOME || join(env.HOME ?? "", ".local", "share");
  const found = [
    ...named(env, ["OPENCODE_AUTH_CONTENT", ...OPENCODE_KEYS]),
    ...file(
      filled,
      join(data, "opencode", "auth.json"),
      env.XDG_DATA_HOME ? "$XDG_DATA_HOME/opencode/auth.json" : "~/.local/share/opencode/auth.json",
    ),
  ];
  return {
    found,
    enough: found.length > 0,
    fix: "set a provider's key (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, …), or log in once with `opencode auth login` (it writes ~/.local/share/opencode/auth.json)",
  };
};

export const piCredentials: CredentialsCheck = (env, filled, gateway) => {
  const dir = env.PI_CODING_AGENT_DIR ? tilde(env, env.PI_CODING_AGENT_DIR) : join(env.HOME ?? "", ".pi", "agent");
  const shown = env.PI_CODING_AGENT_DIR ? "$PI_CODING_AGENT_DIR" : "~/.pi/agent";
  // models.json may define providers with their own keys.
  const found = [
    ...named(env, [...new Set(Object.values(PI_KEYS).flat())]),
    ...file(filled, join(dir, "auth.json"), `${shown}/auth.json`),
    ...file(filled, join(dir, "models.json"), `${shown}/models.json`),
  ];
  const needed = gateway === "" ? undefined : PI_KEYS[gateway];
  const gatewayKeyMissing = needed !== undefined && named(env, needed).length === 0 && !found.some((f) => f.endsWith(".json"));
  return {
    found,
    enough: found.length > 0,
    fix: `set the key of the provider pi routes to (${needed?.[0] ?? "OPENROUTER_API_KEY, ANTHROPIC_API_KEY, …"}), or log in once with \`pi\` (/login writes ~/.pi/agent/auth.json)`,
    note:
      found.length > 0 && gatewayKeyMissing
        ? `the gateway ${gateway} needs ${needed[0]} for a routed --model (else --direct with a provider whose key is set)`
        : undefined,
  };
};
