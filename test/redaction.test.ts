// Secrets by value and by shape (issue 12, item 9), through the compiled
// binary and its fake claude: canary values in the environment (under names
// that look secret) and in an env file (under a name that does not), and a
// canary of every common token format, echoed by the agent in its error
// text, its stderr, its retry errors, its tool inputs and its final answer,
// never appear in stdout, stderr, progress, the ledger or `sessions`/`show`.
//
// The run folder's files are searched too, stderr.log included (it is
// redacted line by line before it is kept).
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";
import { Redactor, secretName } from "../src/core/redact.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const tag = crypto.randomUUID().replace(/-/g, "").slice(0, 16);
const TAG = tag.toUpperCase().replace(/[^A-Z0-9]/g, "X");

/** Secrets that only their value gives away: no shape rule knows them. */
const BY_VALUE_ENV: Record<string, string> = {
  DEPLOY_PASSWORD: `Plain${tag}Pw`,
  AWS_SECRET_ACCESS_KEY: `wJalr${tag}/K7MDENG+bPxRfiCY`,
  DATABASE_URL: `postgres://app:Db${tag}@db.internal:5432/app`,
  MY_SERVICE_PASS: `svc-${tag}`,
  STRIPE_KEY: `rk_live_${tag}`,
  SENTRY_DSN: `https://${tag}@o1.ingest.sentry.io/2`,
  GITLAB_AUTH: `auth-${tag}`,
  APP_CREDENTIAL: `cred.${tag}`,
  SIGNING_PRIVATE: `priv:${tag}`,
  SERVICE_TOKEN: `tok~${tag}`,
};
/** A value of an env file under a name that says nothing: redacted because it came from an env file. */
const BY_VALUE_FILE = { PLAIN_SETTING: `file${tag}value` };
/** Every common format, in no environment: the shape rules must catch them. */
const BY_SHAPE: Record<string, string> = {
  openai: `sk-proj-${tag}${tag}`,
  anthropic: `sk-ant-api03-${tag}${tag}`,
  aws: `AKIA${TAG}`,
  ghp: `ghp_${tag}${tag}AbCd`,
  gho: `gho_${tag}${tag}EfGh`,
  github_pat: `github_pat_11${TAG}_${tag}${tag}`,
  gitlab: `glpat-${tag}${tag}`,
  slack: `xoxb-1234-${tag}`,
  google: `ya29.${tag}${tag}`,
  jwt: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIke${tag}.sig${tag}`,
  url: `https://deploy:Url${tag}@git.example.com/repo.git`,
  bearer: `Authorization: Bearer Bt${tag}`,
  basic: `Basic Qm${tag}`,
};
/** What must never be seen: the secret part of each canary. */
const NEEDLES: Record<string, string> = {
  ...Object.fromEntries(Object.entries(BY_VALUE_ENV).map(([k, v]) => [`env ${k}`, v])),
  "file PLAIN_SETTING": BY_VALUE_FILE.PLAIN_SETTING,
  ...Object.fromEntries(
    Object.entries(BY_SHAPE).map(([k, v]) => [
      `shape ${k}`,
      k === "url" ? `Url${tag}` : k === "bearer" ? `Bt${tag}` : k === "basic" ? `Qm${tag}` : v,
    ]),
  ),
};
const valueSecrets = [...Object.values(BY_VALUE_ENV), BY_VALUE_FILE.PLAIN_SETTING];
const everything = [...valueSecrets, ...Object.values(BY_SHAPE)].join(" | ");

function world(): FakeProject & { envFile: string } {
  const w = fakeProject("agentport-redaction-", { ...BY_VALUE_ENV });
  made.push(w.root);
  const envFile = join(w.root, "chosen.env");
  writeFileSync(envFile, `PLAIN_SETTING=${BY_VALUE_FILE.PLAIN_SETTING}\nSHORT=abc\n`);
  return { ...w, envFile };
}

function stateFiles(w: FakeProject): Record<string, string> {
  const dir = join(w.root, "state");
  const out: Record<string, string> = {};
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const path = join(dir, name);
    if (!statSync(path).isFile()) continue;
    out[path.slice(w.root.length)] = new TextDecoder("utf-8", { fatal: false }).decode(readFileSync(path));
  }
  return out;
}

function leaks(places: Record<string, string>): string[] {
  const hits: string[] = [];
  for (const [place, text] of Object.entries(places))
    for (const [what, needle] of Object.entries(NEEDLES)) if (text.includes(needle)) hits.push(`${place}: ${what}`);
  return hits;
}

const run = (w: world, scenario: unknown, extra: string[]) =>
  agentport(["run", "--agent", "claude", "--env-file", w.envFile, "--env-allow", "PLAIN_SETTING", "--env-allow", "SHORT", ...extra, "go"], {
    cwd: w.proj,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario) },
  });
type world = ReturnType<typeof world>;

describe("secrets by value and by shape never leave agentport", () => {
  test("a failed run echoing every secret in its retry errors, stderr and error text: stdout, stderr, progress, ledger, sessions and show are clean", async () => {
    const w = world();
    const failing = {
      steps: [
        { retry: { status: 401, error: `authentication_failed ${everything}`, max: 1 } },
        { tool: { name: "Bash", input: { command: "env", description: `Print ${everything}` }, result: everything } },
        { stderr: `Error: 401 Unauthorized while using ${everything}\n` },
        { result: { is_error: true, text: `API Error: 401 invalid credentials ${everything}`, api_error_status: 401 } },
        { exit: 1 },
      ],
    };
    const json = await run(w, failing, ["--json", "--progress", "json"]);
    const lines = await run(w, failing, ["--progress", "lines", "--verbose"]);
    expect(json.code).toBe(5);
    expect(lines.code).toBe(5);
    const verdict = JSON.parse(json.stdout);
    // The run was seen for what it was, and its strings were redacted, not dropped.
    expect(verdict.fault.kind).toBe("auth");
    expect(verdict.failure.message).toContain("[redacted]");
    expect(String(verdict.summary.last_retry_error)).toContain("[redacted]");
    expect(json.stderr).toContain('"tool":"Bash"');
    const id = verdict.session_id as string;
    const sessions = await agentport(["sessions", "--json"], { cwd: w.proj, env: w.env });
    const show = await agentport(["show", id], { cwd: w.proj, env: w.env });
    const showJson = await agentport(["show", id, "--json"], { cwd: w.proj, env: w.env });
    expect(showJson.stdout).toContain("[redacted]");
    const places = {
      "run --json stdout": json.stdout,
      "run --json stderr (progress json)": json.stderr,
      "run stdout": lines.stdout,
      "run stderr (progress lines, verbose)": lines.stderr,
      "sessions --json": sessions.stdout + sessions.stderr,
      show: show.stdout + show.stderr,
      "show --json": showJson.stdout,
      ...stateFiles(w),
    };
    expect(Object.keys(places).some((p) => p.endsWith("ledger.sqlite") || p.endsWith("ledger.sqlite-wal"))).toBe(true);
    expect(leaks(places)).toEqual([]);
  });

  test("a successful run: the final answer loses the values of the environment and the env file, and keeps what is only shaped like a key", async () => {
    const w = world();
    const answer = `Done. ${valueSecrets.join(" ")} and the example key sk-example-${tag} stays.`;
    const ok = { steps: [{ text: answer }, { result: { text: answer } }] };
    const plain = await run(w, ok, ["--progress", "off"]);
    const json = await run(w, ok, ["--json", "--progress", "off"]);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toStartWith("Done. [redacted] ");
    expect(plain.stdout).toContain(`sk-example-${tag}`);
    for (const value of valueSecrets) {
      expect(plain.stdout).not.toContain(value);
      expect(json.stdout).not.toContain(value);
    }
  });

  test("the secret-looking names, and the places that are not secrets", () => {
    for (const name of [...Object.keys(BY_VALUE_ENV), "OPENROUTER_API_KEY", "GITHUB_TOKEN", "PGPASSWORD", "NPM_AUTH_TOKEN"])
      expect(secretName(name)).toBe(true);
    for (const name of ["PATH", "HOME", "GIT_AUTHOR_NAME", "SSH_AUTH_SOCK", "AGENTPORT_HOME", "TERM", "XAUTHORITY"])
      expect(secretName(name)).toBe(false);
    const r = new Redactor();
    r.addEnvironment({ SSH_AUTH_SOCK: "/run/user/1000/keyring/ssh", API_KEY: "short", DEPLOY_TOKEN: "long-enough-token" });
    expect(r.values("/run/user/1000/keyring/ssh short long-enough-token")).toBe("/run/user/1000/keyring/ssh short [redacted]");
    // Inside JSON text, a value with a quote is still found.
    r.addValues(['pa"ss-word']);
    expect(r.values(JSON.stringify({ x: 'pa"ss-word' }))).toBe('{"x":"[redacted]"}');
  });

  test("every shape, one by one, in a plain line", () => {
    const r = new Redactor();
    for (const [name, value] of Object.entries(BY_SHAPE)) {
      const out = r.text(`the ${name} credential is ${value} here`);
      expect(out).toContain("[redacted]");
      expect(out).not.toContain(NEEDLES[`shape ${name}`] ?? "?");
    }
    // A URL keeps its user and host, a header its scheme.
    expect(r.text(BY_SHAPE.url ?? "")).toBe("https://deploy:[redacted]@git.example.com/repo.git");
    // A password with `@` in it is redacted to the authority's last `@`.
    expect(r.text("see postgres://u:p@ss@db.internal/app?x=a@b now")).toBe("see postgres://u:[redacted]@db.internal/app?x=a@b now");
    expect(r.text(BY_SHAPE.bearer ?? "")).toBe("Authorization: [redacted]");
  });

  test("key=value pairs run together: each value is redacted, whatever joins them (a query string, a header list, escaped JSON)", () => {
    const r = new Redactor();
    r.addValues(["KNOWN-VALUE-123"]);
    const keys = [
      "api_key",
      "apiKey",
      "x-api-key",
      "authorization",
      "access_token",
      "password",
      "secret",
      "AWS_SECRET_ACCESS_KEY",
      "GITHUB_TOKEN",
      "DB_PASS",
    ];
    const separators = ["=", ": ", '":"', '="', "='", '\\":\\"'];
    const joins = [" ", ",", ";", "&", "\t", "\n", ")", '"', "'", "|", "/", "\\n", "}", "]", "%20", "<", ">"];
    const leaked: string[] = [];
    for (const first of keys)
      for (const second of keys)
        for (const sep of separators)
          for (const join of joins)
            for (const value of ["AAAAAAAAAAAA", "KNOWN-VALUE-123"]) {
              const text = `${first}${sep}${value}${join}${second}${sep}BBBBBBBBBBBB`;
              const out = r.text(text);
              if (/AAAAAAAAAAAA|BBBBBBBBBBBB|KNOWN-VALUE/.test(out)) leaked.push(`${text} => ${out}`);
            }
    expect(leaked.slice(0, 5)).toEqual([]);
    // A value that merely contains a key's word is one value.
    expect(r.text("api_key=mysecretvalue42 done")).toBe("api_key=[redacted] done");
    expect(r.text("password=apikeyish-passwd9 x")).toBe("password=[redacted] x");
  });
});
