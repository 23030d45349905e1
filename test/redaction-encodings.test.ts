// What secrets become (issue 24, item 11): an environment secret that the
// agent prints base64-encoded (in each of the three alignments, and
// base64url), percent-encoded, hex, JSON \u-escaped or `\/`-escaped, or split
// by a line break on its stderr, never reaches stdout, stderr, the --json
// verdict, the run folder (stream.jsonl, stderr.log, progress.ndjson,
// verdict.json) or the ledger. Through the compiled binary and its fake claude.
//
// Also the secret-name rule, as a table: names whose values are secrets, and
// the look-alikes that name a place or a setting.
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";
import { secretName } from "../src/core/redact.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const tag = crypto.randomUUID().replace(/-/g, "").slice(0, 16);
/** A secret with the characters every encoding changes: `/`, `+`, `=`, `&`, a space. */
const TOKEN = `Tk/${tag}+q=1&z w`;

const bytes = (s: string) => Buffer.from(s, "utf8");
const unicodeEscaped = (s: string, upper = false) =>
  [...s]
    .map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .map((e) => (upper ? e.toUpperCase().replace("\\U", "\\u") : e))
    .join("");
const percentAll = (s: string) => [...bytes(s)].map((b) => `%${b.toString(16).padStart(2, "0").toUpperCase()}`).join("");

/** What the agent prints: each encoding of TOKEN. */
const ENCODED: Record<string, string> = {
  "base64, aligned": bytes(TOKEN).toString("base64"),
  "base64, one byte before": bytes(`x${TOKEN}`).toString("base64"),
  "base64, two bytes before": bytes(`xy${TOKEN}`).toString("base64"),
  "base64 inside user:password (Basic)": bytes(`deploy:${TOKEN}`).toString("base64"),
  base64url: bytes(TOKEN).toString("base64url"),
  "base64url, one byte before": bytes(`x${TOKEN}`).toString("base64url"),
  "percent-encoding": encodeURIComponent(TOKEN),
  "percent-encoding of every byte": percentAll(TOKEN),
  "percent-encoding, lower case": percentAll(TOKEN).toLowerCase(),
  "form encoding": new URLSearchParams({ t: TOKEN }).toString().slice(2),
  hex: bytes(TOKEN).toString("hex"),
  "hex, upper case": bytes(TOKEN).toString("hex").toUpperCase(),
  "JSON \\u escapes": unicodeEscaped(TOKEN),
  "JSON \\u escapes, upper case": unicodeEscaped(TOKEN, true),
  "JSON \\/": JSON.stringify(TOKEN).slice(1, -1).replaceAll("/", "\\/"),
};

/** Secrets under the names the old rule missed, printed as they are. */
const NAMED: Record<string, string> = {
  MYSQL_PWD: `mysql${tag}pw`,
  GH_PAT: `pat${tag}x`,
  SLACK_WEBHOOK: `https://hooks.slack.example/services/T0/B0/${tag}`,
  DEPLOY_CREDS: `creds${tag}`,
  API_SIG: `sig${tag}q`,
  SIGNING_SALT: `salt${tag}`,
  CERT_PEM: `pem${tag}body`,
};

/** The part of an encoding that depends on the secret alone (its first and last 4 characters may hold a neighbour's bits). */
const core = (encoded: string) => encoded.slice(4, -4);
const half = Math.floor(TOKEN.length / 2);
const NEEDLES: Record<string, string> = {
  plain: TOKEN,
  ...Object.fromEntries(Object.entries(ENCODED).map(([k, v]) => [k, core(v)])),
  ...Object.fromEntries(Object.entries(NAMED).map(([k, v]) => [`named ${k}`, v])),
  "split, first half": TOKEN.slice(0, half),
  "split, second half": TOKEN.slice(half),
};

const everything = [...Object.values(ENCODED), ...Object.values(NAMED)].join(" | ");

function stateFiles(w: FakeProject): Record<string, string> {
  const dir = join(w.root, "state");
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (statSync(path).isFile()) out[path.slice(w.root.length)] = new TextDecoder().decode(readFileSync(path));
  }
  return out;
}

function leaks(places: Record<string, string>): string[] {
  const hits: string[] = [];
  for (const [place, text] of Object.entries(places))
    for (const [what, needle] of Object.entries(NEEDLES)) if (text.includes(needle)) hits.push(`${place}: ${what}`);
  return hits;
}

describe("a secret's encodings never leave agentport", () => {
  test("base64, base64url, percent, hex, \\u, \\/ and a line break: stdout, stderr, verdict, stream.jsonl, stderr.log, progress.ndjson and the ledger are clean", async () => {
    const w = fakeProject("agentport-encodings-", { DEPLOY_TOKEN: TOKEN, ...NAMED });
    made.push(w.root);
    const scenario = {
      steps: [
        { text: `Encoded: ${everything}` },
        { tool: { name: "Bash", input: { command: `echo ${everything}`, description: "Print it" }, result: everything } },
        // The JSON of the stream itself \u-escapes it (a record no reducer reads: stream.jsonl only).
        { raw: `{"type":"system","subtype":"note","text":"${unicodeEscaped(TOKEN)}"}` },
        { stderr: `${everything}\n` },
        // Split by a line break, in one write and across two.
        { stderr: `token: ${TOKEN.slice(0, half)}\n${TOKEN.slice(half)} end\n` },
        { stderr: `again ${TOKEN.slice(0, half)}\r\n` },
        { stderr: `${TOKEN.slice(half)}\n` },
        { result: { text: `Done: ${everything}` } },
      ],
    };
    const env = { ...w.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario) };
    const json = await agentport(["run", "--agent", "claude", "--json", "--progress", "json", "go"], { cwd: w.proj, env });
    const lines = await agentport(["run", "--agent", "claude", "--progress", "lines", "--verbose", "go"], { cwd: w.proj, env });
    expect(json.code).toBe(0);
    expect(lines.code).toBe(0);
    expect(JSON.parse(json.stdout).text).toContain("[redacted]");
    const files = stateFiles(w);
    expect(
      Object.keys(files).filter((p) => /stream\.jsonl$|stderr\.log$|progress\.ndjson$|verdict\.json$|ledger\.sqlite/.test(p)).length,
    ).toBeGreaterThanOrEqual(9);
    const places = {
      "--json stdout": json.stdout,
      "--json stderr": json.stderr,
      stdout: lines.stdout,
      "stderr (lines, verbose)": lines.stderr,
      ...files,
    };
    expect(leaks(places)).toEqual([]);
  });
});

describe("the secret-name rule", () => {
  const SECRET = [
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "GITHUB_TOKEN",
    "NPM_AUTH_TOKEN",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "PGPASSWORD",
    "DB_PASSWD",
    "DB_PASS",
    "MYSQL_PWD",
    "GH_PAT",
    "SLACK_WEBHOOK",
    "SLACK_WEBHOOK_URL",
    "DEPLOY_CREDS",
    "GCP_CREDENTIALS",
    "APP_CREDENTIAL",
    "API_SIG",
    "REQUEST_SIGNATURE",
    "SIGNING_SALT",
    "CERT_PEM",
    "TLS_PRIVATE",
    "SENTRY_DSN",
    "DATABASE_URL",
    "SESSION_COOKIE",
    "GITLAB_AUTH",
    "OAUTH_CLIENT",
    "APIKEY",
    "HF_TOKEN",
    "SECRET",
    "PRIVATE_KEY",
    "ENCRYPTION_KEY",
    "JWT_SECRET",
    "SESSION_SECRET",
    "LICENSE_KEY",
    "WEBHOOK_SECRET",
    "DEPLOY_KEY",
    "PASSPHRASE",
    "GPG_PASSPHRASE",
    "BOT_TOKEN",
  ];
  const NOT_SECRET = [
    "PATH",
    "HOME",
    "PWD",
    "OLDPWD",
    "TERM",
    "SHELL",
    "USER",
    "LANG",
    "SSH_AUTH_SOCK",
    "XAUTHORITY",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "KEYBOARD",
    "KEYMAP",
    "XKB_KEYMAP",
    "AGENTPORT_HOME",
    "SSH_KEY_PATH",
    "GOOGLE_APPLICATION_CREDENTIALS_FILE",
    "TOKENIZERS_PARALLELISM",
    "PASSENGER_APP_ENV",
    "SIGNAL_DIR",
    "PATCH_LEVEL",
    "SALTSTACK_MINION",
    "CERT_DIR",
    "PEM_FILE",
    "GPG_KEY_HOME",
    "KEY_FILE",
    "DISPLAY",
    "EDITOR",
    "COMPOSE_PROJECT_NAME",
    "PAGER",
  ];
  test("every secret name is one", () => {
    expect(SECRET.filter((n) => !secretName(n))).toEqual([]);
  });
  test("no look-alike is one", () => {
    expect(NOT_SECRET.filter((n) => secretName(n))).toEqual([]);
  });
});
