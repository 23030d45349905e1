// The key rule of env files (core/env-keys.ts), name by name: what an env
// file may set, what only the real environment may, and agentport's own
// variables, which stay with agentport unless passed on by name.
import { describe, expect, test } from "bun:test";
import { allowIssue, credentialName, envFileKey, ownName, steeringName } from "../src/core/env-keys.ts";
import { agentEnvironment } from "../src/core/env.ts";
import { adapters } from "../src/agents/table.ts";

const CREDENTIALS = [
  "OPENAI_API_KEY",
  "ANTHROPIC_API_KEY",
  "OPENROUTER_API_KEY",
  "GEMINI_API_KEY",
  "GOOGLE_API_KEY",
  "API_KEY",
  "MISTRAL_APIKEY",
  "GITHUB_TOKEN",
  "GH_TOKEN",
  "NPM_TOKEN",
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "AWS_SESSION_TOKEN",
  "HF_TOKEN",
  "AWS_ACCESS_KEY_ID",
  "AWS_SECRET_ACCESS_KEY",
  "STRIPE_SECRET_KEY",
  "DEPLOY_PRIVATE_KEY",
  "CLIENT_SECRET",
  "DB_PASSWORD",
  "PASSWORD",
  "V2_TOKEN",
];
const NOT_CREDENTIALS = [
  "openai_api_key",
  "OPENAI_API_KEY_FILE",
  "TOKEN_PATH",
  "GITHUB_TOKENS",
  "MAX_THINKING_TOKENS",
  "SECRET_SAUCE",
  "PASSWORD_HINT",
  "MY_KEY",
  "_TOKEN",
  "1_TOKEN",
  "CODEX_HOME",
  "PLAIN_SETTING",
  "KEYBOARD",
  "SSH_AUTH_SOCK",
];
// Each moves where code is loaded or where requests and credentials go: refused from an env file even when allowed by name.
const STEERING = [
  "CODEX_HOME",
  "GIT_CONFIG_GLOBAL",
  "GIT_CONFIG_COUNT",
  "GIT_SSH_COMMAND",
  "GIT_ASKPASS",
  "GIT_EXEC_PATH",
  "BUN_OPTIONS",
  "BUN_INSTALL",
  "OPENCODE_CONFIG",
  "OPENCODE_CONFIG_DIR",
  "OPENCODE_CONFIG_CONTENT",
  "XDG_CONFIG_HOME",
  "XDG_DATA_HOME",
  "GCONV_PATH",
  "PYTHONPATH",
  "PYTHONSTARTUP",
  "PYTHONHOME",
  "PERL5OPT",
  "PERL5LIB",
  "RUBYOPT",
  "RUBYLIB",
  "AWS_ENDPOINT_URL",
  "AWS_ENDPOINT_URL_S3",
  "OPENAI_API_BASE",
  "OPENAI_BASE_URL",
  "ANTHROPIC_BASE_URL",
  "GOOGLE_GEMINI_BASE_URL",
  "GEMINI_CLI_SYSTEM_SETTINGS_PATH",
  "ZDOTDIR",
  "PROMPT_COMMAND",
  "HOSTALIASES",
  "TMPDIR",
  "TMP",
  "TEMP",
  "NODE_OPTIONS",
  "NODE_PATH",
  "NODE_EXTRA_CA_CERTS",
  "NODE_TLS_REJECT_UNAUTHORIZED",
  "LD_PRELOAD",
  "LD_LIBRARY_PATH",
  "DYLD_INSERT_LIBRARIES",
  "PATH",
  "HOME",
  "BASH_ENV",
  "ENV",
  "SHELL",
  "EDITOR",
  "PAGER",
  "HTTPS_PROXY",
  "http_proxy",
  "ALL_PROXY",
  "no_proxy",
  "SSL_CERT_FILE",
  "SSL_CERT_DIR",
  "REQUESTS_CA_BUNDLE",
  "CURL_CA_BUNDLE",
  "CLAUDE_CONFIG_DIR",
  "PI_CODING_AGENT_DIR",
  "PI_PACKAGE_DIR",
  "PI_SHARE_VIEWER_URL",
  "KUBECONFIG",
  "NPM_CONFIG_REGISTRY",
  "npm_config_userconfig",
  "JAVA_TOOL_OPTIONS",
  "SSH_AUTH_SOCK",
  "GOOGLE_APPLICATION_CREDENTIALS",
  "DOCKER_HOST",
  "CODEX_SANDBOX_PORT",
  "OPENCODE_PLUGINS",
  "GIT_TOKEN_HELPER_CMD",
];
const HARMLESS = [
  "PLAIN_SETTING",
  "ANTHROPIC_MODEL",
  "MAX_THINKING_TOKENS",
  "PI_OFFLINE",
  "GEMINI_MODEL",
  "LANG",
  "TZ",
  "DEBUG",
  "OPENAI_API_KEY",
  "GITHUB_TOKEN",
];
const OWN = [
  "AGENTPORT_LEDGER",
  "AGENTPORT_HOME",
  "AGENTPORT_CONFIG",
  "AGENTPORT_PHASE",
  "AGENTPORT_RUN_ID",
  "AGENTPORT_PI_BIN",
  "PGPASSWORD",
  "PGHOST",
  "PGUSER",
  "PGPASSFILE",
  "PGSERVICEFILE",
  "PGSSLROOTCERT",
];

describe("the key rule", () => {
  test.each(CREDENTIALS)("%s is a credential by its name", (name) => expect(credentialName(name)).toBe(true));
  test.each(NOT_CREDENTIALS)("%s is not a credential by its name", (name) => expect(credentialName(name)).toBe(false));
  test.each(STEERING)("%s steers the agent: refused even when allowed, and --env-allow %s is an error", (name) => {
    expect(steeringName(name)).toBe(true);
    expect(envFileKey(name, new Set([name]))).toEqual({ taken: false, kind: "steering" });
    expect(allowIssue(name, "--env-allow")).toContain("only the real environment may set it");
  });
  test.each(HARMLESS)("%s does not steer the agent", (name) => expect(steeringName(name)).toBe(false));
  test.each(OWN)("%s is agentport's own: never from an env file, allowed or not", (name) => {
    expect(ownName(name)).toBe(true);
    expect(envFileKey(name, new Set([name]))).toEqual({ taken: false, kind: "own" });
    expect(allowIssue(name, "--env-allow")).toBeNull();
  });
  test("the fake agents' settings are theirs, not agentport's, but never come from an env file either", () => {
    expect(ownName("AGENTPORT_FAKE_SCENARIO")).toBe(false);
    expect(envFileKey("AGENTPORT_FAKE_SCENARIO", new Set(["AGENTPORT_FAKE_SCENARIO"]))).toEqual({ taken: false, kind: "own" });
  });
  test("any other key is taken only when allowed by name", () => {
    expect(envFileKey("PLAIN_SETTING", new Set())).toEqual({ taken: false, kind: "not_allowed" });
    expect(envFileKey("PLAIN_SETTING", new Set(["PLAIN_SETTING"]))).toEqual({ taken: true });
    expect(envFileKey("OPENAI_API_KEY", new Set())).toEqual({ taken: true });
    expect(allowIssue("NOT A NAME", "--env-allow")).toBe("--env-allow NOT A NAME: not an environment variable name");
  });
  // acp is any ACP agent: it has no settings of its own.
  test.each(
    adapters()
      .filter((a) => a.name !== "acp")
      .map((a) => [a.name, a.envSettings] as const),
  )("%s's own settings steer nothing and are no one's own", (_name, names) => {
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) {
      expect(steeringName(name)).toBe(false);
      expect(ownName(name)).toBe(false);
    }
  });
});

describe("agentEnvironment", () => {
  const real = {
    PATH: "/bin",
    AGENTPORT_LEDGER: "postgres://u@h/db",
    AGENTPORT_HOME: "/s",
    PGPASSWORD: "pw",
    AGENTPORT_FAKE_SCENARIO: "text",
    KEEP: "k",
  };
  const files = [{ path: "a.env", values: { OPENAI_API_KEY: "sk-1", CODEX_HOME: "/evil", PLAIN: "p", AGENTPORT_HOME: "/evil" } }];

  test("agentport's own variables stay with it; the fakes' settings and everything else pass", () => {
    const { env } = agentEnvironment({ real, files: [], allowed: new Set() });
    expect(env).toEqual({ PATH: "/bin", AGENTPORT_FAKE_SCENARIO: "text", KEEP: "k" });
  });
  test("passed on by name", () => {
    const { env } = agentEnvironment({ real, files: [], allowed: new Set(["PGPASSWORD", "AGENTPORT_LEDGER"]) });
    expect(env.PGPASSWORD).toBe("pw");
    expect(env.AGENTPORT_LEDGER).toBe("postgres://u@h/db");
    expect(env.AGENTPORT_HOME).toBeUndefined();
  });
  test("every refused key is named with its file and its kind; credentials are taken", () => {
    const { env, refused, taken } = agentEnvironment({ real, files, allowed: new Set(["CODEX_HOME"]) });
    expect(refused).toEqual([
      { key: "CODEX_HOME", file: "a.env", kind: "steering" },
      { key: "PLAIN", file: "a.env", kind: "not_allowed" },
      { key: "AGENTPORT_HOME", file: "a.env", kind: "own" },
    ]);
    expect(taken).toEqual([{ path: "a.env", keys: ["OPENAI_API_KEY"] }]);
    expect(env.OPENAI_API_KEY).toBe("sk-1");
    expect(env.CODEX_HOME).toBeUndefined();
  });
  test("with a profile only its keys are judged and taken; an empty profile takes nothing", () => {
    const vault = agentEnvironment({ real, files, allowed: new Set(), profile: ["OPENAI_API_KEY"] });
    expect(vault.refused).toEqual([]);
    expect(vault.env.OPENAI_API_KEY).toBe("sk-1");
    expect(agentEnvironment({ real, files, allowed: new Set(), profile: ["CODEX_HOME"] }).refused).toEqual([
      { key: "CODEX_HOME", file: "a.env", kind: "steering" },
    ]);
    const closed = agentEnvironment({ real, files, allowed: new Set(), profile: [] });
    expect(closed.refused).toEqual([]);
    expect(closed.env.OPENAI_API_KEY).toBeUndefined();
  });
});
