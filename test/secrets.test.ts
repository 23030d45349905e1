// Secrets: canary keys in the environment, in the folder's .env, in a tool's
// input and in a tool's result never appear in what agentport writes: stdout
// (final text and --json verdict), stderr (human lines and every progress
// mode), the ledger file (with its WAL), the run folder, or `sessions`/`show`.
// Both agents, through the compiled binary driving its fake agents.
//
// The fields a reducer shows by design (a relative path, a Grep/Glob
// pattern, a Bash description, a model name) carry no canary here: showing
// those is the documented allow-list, not a leak.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, tempDir } from "./helpers.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tag = crypto.randomUUID().replace(/-/g, "").slice(0, 12);
/** Each canary's value; the search looks for the distinctive core (no prefix), so a partial echo is caught too. */
const CANARY = {
  envKey: `sk-ant-api03-CanaryEnv${tag}`,
  envPlain: `cnry-env-${tag}`,
  dotenvKey: `sk-or-v1-CanaryDotenv${tag}`,
  dotenvPlain: `cnry-dotenv-${tag}`,
  input: `cnry-input-${tag}`,
  result: `cnry-result-${tag}`,
  text: `cnry-text-${tag}`,
};
const needles = (which: (keyof typeof CANARY)[]) => which.map((k) => CANARY[k].replace(/^(sk-ant-api03-|sk-or-v1-)/, ""));
const ALL = Object.keys(CANARY) as (keyof typeof CANARY)[];

interface World {
  root: string;
  project: string;
  home: string;
  bin: string;
  env: Record<string, string>;
}

function world(): World {
  const root = tempDir("agentport-secrets-");
  dirs.push(root);
  const project = join(root, "project");
  const bin = join(root, "bin");
  for (const d of [project, bin, join(root, "userhome"), join(root, "pi-agent")]) mkdirSync(d, { recursive: true });
  symlinkSync(BIN, join(bin, "fake-claude"));
  symlinkSync(BIN, join(bin, "fake-pi"));
  symlinkSync(BIN, join(bin, "fake-opencode"));
  writeFileSync(join(project, ".env"), `# vault\nOPENROUTER_API_KEY=${CANARY.dotenvKey}\nexport CANARY_DOTENV="${CANARY.dotenvPlain}"\n`);
  writeFileSync(join(project, "notes.txt"), "plain notes\n");
  const home = join(root, "state");
  return {
    root,
    project,
    home,
    bin,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: join(root, "userhome"),
      PI_CODING_AGENT_DIR: join(root, "pi-agent"),
      AGENTPORT_HOME: home,
      AGENTPORT_CONFIG: "",
      AGENTPORT_GATEWAY: "",
      NO_COLOR: "1",
      ANTHROPIC_API_KEY: CANARY.envKey,
      AGENTPORT_CANARY_ENV: CANARY.envPlain,
    },
  };
}

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function ap(w: World, args: string[], scenario: string, stdin?: string): Promise<Ran> {
  const proc = Bun.spawn([BIN, ...args], {
    cwd: w.project,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: scenario },
    stdin: stdin === undefined ? "ignore" : new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Every file under `dir` (the ledger, its -wal/-shm, run folders, extensions…), as bytes decoded loosely. */
function filesUnder(dir: string, skip: (path: string) => boolean = () => false): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  let names: string[] = [];
  try {
    names = readdirSync(dir, { recursive: true }) as string[];
  } catch {
    return out;
  }
  for (const name of names) {
    const path = join(dir, name);
    if (skip(path) || !statSync(path).isFile()) continue;
    out.push({ path, text: new TextDecoder("utf-8", { fatal: false }).decode(readFileSync(path)) });
  }
  return out;
}

/** The canaries that are secrets by value: out of every place, the kept stream included. */
const SECRET_VALUES: (keyof typeof CANARY)[] = ["envKey", "dotenvKey", "dotenvPlain"];

/**
 * Where each canary shows up: "<place>: <canary>" for every hit. A run folder's
 * stream.jsonl is the agent's own stdout, kept on purpose for replay
 * (`--keep-stream off` drops it): it may hold the conversation, never a secret value.
 */
function leaks(places: Record<string, string>, which = ALL): string[] {
  const hits: string[] = [];
  for (const [place, text] of Object.entries(places)) {
    const kept = place.endsWith("/stream.jsonl") ? which.filter((k) => SECRET_VALUES.includes(k)) : which;
    for (const n of needles(kept)) if (text.includes(n)) hits.push(`${place}: ${n}`);
  }
  return hits;
}

function stateFiles(w: World, skip?: (path: string) => boolean): Record<string, string> {
  return Object.fromEntries(filesUnder(w.home, skip).map((f) => [f.path.slice(w.root.length), f.text]));
}

const CLAUDE_SCENARIO = JSON.stringify({
  steps: [
    { thinking: 40 },
    { text: `Let me look. ${CANARY.text}` },
    { tool: { name: "Read", input: { file_path: "notes.txt", token: CANARY.input }, result: `plain notes\nAPI_KEY=${CANARY.result}\n` } },
    {
      tool: {
        name: "Bash",
        input: { command: `curl -H "Authorization: Bearer ${CANARY.input}" https://example.invalid`, description: "Call the API" },
        result: `{"token":"${CANARY.result}"}`,
      },
    },
    {
      tool: {
        name: "Edit",
        input: { file_path: "notes.txt", old_string: `key=${CANARY.input}`, new_string: "key=REDACTED" },
        result: `Updated. Old content had ${CANARY.result}`,
      },
    },
    { tool: { name: "Write", input: { file_path: "out.txt", content: CANARY.input }, result: `wrote ${CANARY.result}`, is_error: true } },
    { tool: { name: "Grep", input: { pattern: "TODO", path: ".", extra: CANARY.input }, result: `notes.txt:1:${CANARY.result}` } },
    { tool: { name: "mcp__vault__get", input: { secret: CANARY.input }, result: CANARY.result } },
    { text: "All done." },
    { result: { text: "All done." } },
  ],
});

const PI_SCENARIO = JSON.stringify({
  steps: [
    { thinking: `Thinking about ${CANARY.text}` },
    { text: `Looking. ${CANARY.text}` },
    { tool: { name: "read", args: { path: "notes.txt", token: CANARY.input }, result: `plain notes\nAPI_KEY=${CANARY.result}\n` } },
    { tool: { name: "bash", args: { command: `echo ${CANARY.input}` }, result: `${CANARY.result}\n`, parallel: true } },
    {
      tool: {
        name: "edit",
        args: { path: "notes.txt", oldText: CANARY.input, newText: "x" },
        result: `Error: ${CANARY.result}`,
        isError: true,
      },
    },
    { tool: { name: "write", args: { path: "out.txt", content: CANARY.input }, result: `Wrote ${CANARY.result}` } },
    { text: "All done." },
  ],
});

describe("canaries never leave agentport", () => {
  test.each(["json", "lines"])(
    "claude, --progress %s: env, .env, tool input and tool result stay out of stdout, stderr, ledger and run folder",
    async (progress) => {
      const w = world();
      const args = [
        "run",
        "--agent",
        "claude",
        "--claude-bin",
        join(w.bin, "fake-claude"),
        "--env-file",
        ".env",
        "--env-allow",
        "CANARY_DOTENV",
        "--progress",
        progress,
      ];
      const json = await ap(w, [...args, "--json", "Summarize notes.txt"], CLAUDE_SCENARIO);
      expect(json.code).toBe(0);
      const verdict = JSON.parse(json.stdout);
      expect(verdict).toMatchObject({ status: "completed", text: "All done.", summary: { tool_calls: 6, tool_errors: 1 } });
      const plain = await ap(w, [...args, "Summarize notes.txt"], CLAUDE_SCENARIO);
      expect(plain.code).toBe(0);
      expect(plain.stdout).toBe("All done.\n");
      // The progress stream did run (the tools are named), so its silence about the canaries means something.
      expect(json.stderr).toContain(progress === "json" ? '"tool":"Bash"' : "claude: tool Bash Call the API");
      const sessions = await ap(w, ["sessions", "--json"], "text");
      const show = await ap(w, ["show", verdict.session_id, "--json"], "text");
      expect(show.code).toBe(0);
      const places = {
        "stdout (--json)": json.stdout,
        "stderr (--json run)": json.stderr,
        stdout: plain.stdout,
        stderr: plain.stderr,
        "sessions --json": sessions.stdout + sessions.stderr,
        "show --json": show.stdout + show.stderr,
        ...stateFiles(w),
      };
      expect(Object.keys(places).some((p) => p.endsWith("ledger.sqlite"))).toBe(true);
      expect(Object.keys(places).some((p) => p.includes("/runs/"))).toBe(true);
      expect(Object.keys(places).some((p) => p.endsWith("/stream.jsonl"))).toBe(true);
      expect(leaks(places)).toEqual([]);
    },
  );

  test("opencode --serve (the fake server), --progress json: the secrets a tool's result quotes are redacted in the kept events too", async () => {
    const w = world();
    const scenario = JSON.stringify({
      steps: [
        { text: `Looking. ${CANARY.text}` },
        {
          tool: {
            name: "shell",
            input: { command: `echo ${CANARY.input}` },
            result: `${CANARY.result} ${CANARY.envKey} ${CANARY.dotenvKey} ${CANARY.dotenvPlain}`,
          },
        },
        { text: "All done." },
        { done: true },
      ],
    });
    const ran = await ap(
      w,
      [
        "run",
        "--agent",
        "opencode",
        "--serve",
        "--opencode-bin",
        join(w.bin, "fake-opencode"),
        "--env-file",
        ".env",
        "--env-allow",
        "CANARY_DOTENV",
        "--progress",
        "json",
        "--json",
        "-",
      ],
      scenario,
      "Summarize notes.txt",
    );
    expect(ran.code).toBe(0);
    const verdict = JSON.parse(ran.stdout);
    expect(verdict).toMatchObject({ agent: "opencode", status: "completed", text: "All done.", summary: { serve: true, tool_calls: 1 } });
    expect(ran.stderr).toContain('"tool":"bash"');
    const show = await ap(w, ["show", verdict.session_id, "--json"], "text");
    const places = { stdout: ran.stdout, stderr: ran.stderr, "show --json": show.stdout + show.stderr, ...stateFiles(w) };
    const stream = Object.entries(places).find(([p]) => p.endsWith("/stream.jsonl"))?.[1] ?? "";
    // The kept events hold the conversation (the tool's result), with the secret values replaced.
    expect(stream).toContain(CANARY.result);
    expect(stream).toContain("[redacted]");
    expect(leaks(places)).toEqual([]);
  });

  test("--keep-stream off: the run folder keeps no stream, and nothing of the conversation is stored", async () => {
    const w = world();
    const ran = await ap(
      w,
      [
        "run",
        "--agent",
        "claude",
        "--claude-bin",
        join(w.bin, "fake-claude"),
        "--env-file",
        ".env",
        "--env-allow",
        "CANARY_DOTENV",
        "--keep-stream",
        "off",
        "--progress",
        "json",
        "--json",
        "go",
      ],
      CLAUDE_SCENARIO,
    );
    expect(ran.code).toBe(0);
    const files = stateFiles(w);
    expect(Object.keys(files).some((p) => p.endsWith("/verdict.json"))).toBe(true);
    expect(Object.keys(files).some((p) => p.endsWith("/stream.jsonl"))).toBe(false);
    expect(leaks({ stdout: ran.stdout, stderr: ran.stderr, ...files })).toEqual([]);
  });

  test("pi (json mode), --progress json: env, .env, tool input and tool result stay out of stdout, stderr, ledger and run folder", async () => {
    const w = world();
    // pi's own session transcript holds the conversation by nature: keep it outside the state folder.
    const sessionDir = join(w.root, "pi-sessions");
    const ran = await ap(
      w,
      [
        "run",
        "--agent",
        "pi",
        "--pi-bin",
        join(w.bin, "fake-pi"),
        "--env-file",
        ".env",
        "--env-allow",
        "CANARY_DOTENV",
        "--model",
        "standin/standin-model",
        "--direct",
        "--session-dir",
        sessionDir,
        "--progress",
        "json",
        "--json",
        "-",
      ],
      PI_SCENARIO,
      "Summarize notes.txt",
    );
    expect(ran.code).toBe(0);
    const verdict = JSON.parse(ran.stdout);
    expect(verdict).toMatchObject({ agent: "pi", status: "completed", text: "All done." });
    expect(verdict.summary.tool_calls).toBe(4);
    expect(ran.stderr).toContain('"tool":"bash"');
    const show = await ap(w, ["show", verdict.session_id, "--json"], "text");
    const places = { stdout: ran.stdout, stderr: ran.stderr, "show --json": show.stdout + show.stderr, ...stateFiles(w) };
    expect(Object.keys(places).some((p) => p.endsWith("ledger.sqlite"))).toBe(true);
    expect(leaks(places)).toEqual([]);
  });

  test("with --profile (the .env as a vault): the vault's keys stay out as well", async () => {
    const w = world();
    const ran = await ap(
      w,
      [
        "run",
        "--agent",
        "claude",
        "--claude-bin",
        join(w.bin, "fake-claude"),
        "--env-file",
        ".env",
        "--env-allow",
        "CANARY_DOTENV",
        "--profile",
        "OPENROUTER_API_KEY",
        "--progress",
        "json",
        "--json",
        "go",
      ],
      CLAUDE_SCENARIO,
    );
    expect(ran.code).toBe(0);
    expect(leaks({ stdout: ran.stdout, stderr: ran.stderr, ...stateFiles(w) })).toEqual([]);
  });

  // The agent's own error text or stderr tail quoting a key (claude "Invalid API key sk-ant-…",
  // a crash dumping its environment): the verdict's failure, stderr and the ledger say [redacted].
  test("secrets-1: an agent's error text or stderr quoting a key is redacted in the verdict failure, stderr, the ledger and stderr.log", async () => {
    const half = Math.floor(CANARY.envKey.length / 2);
    for (const [code, scenario] of [
      [5, { steps: [{ text: "x" }, { stderr: `Error: 401 invalid x-api-key ${CANARY.envKey} rejected\n` }, { exit: 1 }] }],
      [
        5,
        {
          steps: [
            { text: "x" },
            { result: { is_error: true, text: `API Error: 401 Invalid API key ${CANARY.envKey}`, api_error_status: 401 } },
            { exit: 1 },
          ],
        },
      ],
      // The key split across two writes (two reads of the pipe), and a shape-only secret (a bearer token) in the agent's debug output.
      [
        1,
        {
          steps: [
            { text: "x" },
            { stderr: `debug: env dump KEY=${CANARY.envKey.slice(0, half)}` },
            { sleep: 200 },
            { stderr: `${CANARY.envKey.slice(half)} end\ncurl -H "Authorization: Bearer ${CANARY.input}"\n` },
            { exit: 1 },
          ],
        },
      ],
    ] as const) {
      const w = world();
      const ran = await ap(
        w,
        ["run", "--agent", "claude", "--claude-bin", join(w.bin, "fake-claude"), "--json", "go"],
        JSON.stringify(scenario),
      );
      expect(ran.code).toBe(code);
      const logs = filesUnder(w.home).filter((f) => f.path.endsWith("stderr.log"));
      expect(logs).toHaveLength(1);
      if (code === 1) expect(logs[0]!.text).toContain("KEY=[redacted] end\n");
      expect(leaks({ stdout: ran.stdout, stderr: ran.stderr, ...stateFiles(w) }, ["envKey", "input"])).toEqual([]);
    }
  });
});
