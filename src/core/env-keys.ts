// Which variables an env file may set: an allow-list. Pure.
//
// From an env file agentport takes only credentials by their name
// (CREDENTIAL), the harmless settings the agent's row declares, and the names
// the user allows (`--env-allow NAME`, `env_allow` in a trusted config).
// Names that move where code is loaded or where credentials go (STEERING)
// and agentport's own variables (OWN) come only from the real environment,
// even when allowed by name.

/** `*_API_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, …: upper case, one of these endings after a prefix or alone. */
const CREDENTIAL =
  /^(?:[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_)?(?:API_KEY|APIKEY|ACCESS_KEY|ACCESS_KEY_ID|SECRET_KEY|PRIVATE_KEY|TOKEN|SECRET|PASSWORD)$/;

// Code loading (interpreters, loaders, shells, git, hooks, plugins), where
// requests and credentials go (URLs, hosts, proxies, TLS), and where state
// and configuration are read from (homes, folders, paths, config files).
const STEERING: readonly RegExp[] = [
  /^(?:ENV|BASH_ENV|IFS|SHELL|SHELLOPTS|BASHOPTS|TMP|TEMP|EDITOR|VISUAL|PAGER|BROWSER|HOSTALIASES|LOCALDOMAIN|RES_OPTIONS|JAVA_TOOL_OPTIONS|_JAVA_OPTIONS)$/,
  /^(?:LD|DYLD|XDG|GIT|SSH|SSL|BUN|DENO|NPM_CONFIG|AWS_ENDPOINT_URL)_/i,
  /^(?:PYTHON|PERL|RUBY)/,
  /PATH$/,
  /HOME$/,
  /DIRS?$/,
  /CONFIG/,
  /(?:_URL|_URI|_BASE|_ENDPOINT|_HOST|_HOSTS|_PORT|_PROXY|_REGISTRY)$/i,
  /_ENDPOINT_/,
  /(?:OPTIONS|OPTS|OPT)$/,
  /(?:COMMAND|_CMD|_PROGRAM|_SHELL|_FILE|_CREDENTIALS|_SETTINGS|_SOCK|_SOCKET)$/,
  /(?:PRELOAD|_PLUGINS?|_EXTENSIONS?|_HOOKS?|_CERTS?|_CA_|CA_BUNDLE|_TLS_|_INSECURE|_REJECT_UNAUTHORIZED)/,
  /^NODE_(?:OPTIONS|EXTRA_CA_CERTS|TLS_REJECT_UNAUTHORIZED|REPL_EXTERNAL_MODULE)$/,
];

/** agentport's own variables (its settings, the ledger and PostgreSQL's libpq variables). */
const OWN = /^(?:AGENTPORT_[A-Z0-9_]*|PG[A-Z]+)$/;

/** The fake agents' own settings: named after agentport, but read by the agent. */
const FAKE_SETTING = /^AGENTPORT_FAKE_[A-Z0-9_]+$/;

export const credentialName = (name: string): boolean => CREDENTIAL.test(name);
export const steeringName = (name: string): boolean => STEERING.some((pattern) => pattern.test(name));
export const ownName = (name: string): boolean => OWN.test(name) && !FAKE_SETTING.test(name);

/** Why an env file may not set a key: it is not allowed, it steers the agent, or it is agentport's own. */
export type RefusalKind = "not_allowed" | "steering" | "own";

/** What an env file's key is: taken, or refused with a kind. `allowed` holds the agent's own settings and the user's names. */
export function envFileKey(name: string, allowed: ReadonlySet<string>): { taken: true } | { taken: false; kind: RefusalKind } {
  if (OWN.test(name)) return { taken: false, kind: "own" };
  if (steeringName(name)) return { taken: false, kind: "steering" };
  if (credentialName(name) || allowed.has(name)) return { taken: true };
  return { taken: false, kind: "not_allowed" };
}

/** The line that says why a name given to `--env-allow` (or `env_allow`) cannot be allowed, or null when it can. */
export function allowIssue(name: string, label: string): string | null {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return `${label} ${name}: not an environment variable name`;
  if (!ownName(name) && steeringName(name))
    return `${label} ${name}: it changes where the agent loads code or sends credentials; only the real environment may set it`;
  return null;
}
