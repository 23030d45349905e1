// `agentport doctor` answers "can a run start here": each agent installed, its
// version against the tested range, its credentials (names, never values);
// `--agent X` exits 0 only when X can start a run, `doctor` alone exits 5 when
// no agent can. The compiled binary, the real agents, a private HOME and an
// environment that holds only what each test gives it.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, ROOT, tempDir } from "./helpers.ts";
import { peerOrSkip } from "./peers/peers.ts";
import { TESTED } from "../src/core/readiness.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const claude = join(ROOT, "node_modules", ".bin", "claude");
const pi = join(ROOT, "node_modules", ".bin", "pi");
const SECRET = "sk-ant-api03-doctor-must-never-print-this-value";

interface Report {
  ok: boolean;
  ready: string[];
  agents: { name: string; installed: boolean; version: string | null; version_fit: string | null; credentials: string[]; ready: boolean }[];
  checks: { name: string; ok: boolean; level: string; detail: string; fix: string | null }[];
}

function box(): string {
  const home = tempDir("agentport-doctor-");
  made.push(home);
  return home;
}

/** doctor with only PATH, HOME and what is given in its environment. */
async function doctor(home: string, args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([BIN, "doctor", ...args], {
    env: { PATH: "/usr/bin:/bin", HOME: home, NO_COLOR: "1", ...env },
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

const agent = (report: Report, name: string) => report.agents.find((a) => a.name === name);
const check = (report: Report, name: string) => report.checks.find((c) => c.name === name);

describe("doctor: can a run start here", () => {
  test("claude and pi installed, no credentials: each said missing with what to do, no agent ready, exit 5", async () => {
    const home = box();
    const text = await doctor(home, ["--claude-bin", claude, "--pi-bin", pi]);
    expect(text.code).toBe(5);
    expect(text.stdout).toContain("warn claude credentials none found\n     → set ANTHROPIC_API_KEY");
    expect(text.stdout).toContain(
      "warn pi credentials     none found\n     → set the key of the provider pi routes to (OPENROUTER_API_KEY)",
    );
    expect(text.stdout).toContain(
      "FAIL agents             none can start a run here (installed: claude, pi, none with credentials and a working probe)",
    );
    expect(text.stdout).toEndWith("ready: none\n");
    const json = JSON.parse((await doctor(home, ["--json", "--claude-bin", claude, "--pi-bin", pi])).stdout) as Report;
    expect(json).toMatchObject({ ok: false, ready: [] });
    expect(agent(json, "claude")).toMatchObject({ installed: true, version_fit: "tested", credentials: [], ready: false });
    expect(agent(json, "claude")?.version).toContain("2.1.197");
    expect(agent(json, "pi")).toMatchObject({ installed: true, version: "0.73.1", version_fit: "tested", credentials: [], ready: false });
    expect(agent(json, "codex")).toMatchObject({ installed: false, ready: false });
    expect(check(json, "claude credentials")).toMatchObject({ ok: true, level: "warn", detail: "none found" });
  }, 90_000);

  test("no agent at all: exit 5, not five ok lines", async () => {
    const ran = await doctor(box(), []);
    expect(ran.code).toBe(5);
    expect(ran.stdout).toContain("FAIL agents       none can start a run here (no agent is installed)");
  });

  test("--agent claude: exit 0 with a key (named, never its value), exit 5 without", async () => {
    const home = box();
    const without = await doctor(home, ["--agent", "claude", "--claude-bin", claude]);
    expect(without.code).toBe(5);
    expect(without.stdout).toContain("FAIL claude credentials none found");
    // Only the agent asked about is probed.
    expect(without.stdout).not.toContain("pi");
    for (const name of ["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN", "ANTHROPIC_AUTH_TOKEN"]) {
      const ran = await doctor(home, ["--agent", "claude", "--claude-bin", claude], { [name]: SECRET });
      expect(ran.code).toBe(0);
      expect(ran.stdout).toContain(`ok   claude credentials found ${name}\n`);
      expect(ran.stdout + ran.stderr).not.toContain(SECRET);
    }
    const json = JSON.parse(
      (await doctor(home, ["--agent", "claude", "--json", "--claude-bin", claude], { ANTHROPIC_API_KEY: SECRET })).stdout,
    ) as Report;
    expect(json).toMatchObject({ ok: true, ready: ["claude"] });
    expect(JSON.stringify(json)).not.toContain(SECRET);
    // An empty variable is no credential.
    expect((await doctor(home, ["--agent", "claude", "--claude-bin", claude], { ANTHROPIC_API_KEY: "" })).code).toBe(5);
  });

  test("claude's login file counts when it holds a login; an empty one does not", async () => {
    const home = box();
    mkdirSync(join(home, ".claude"));
    writeFileSync(join(home, ".claude", ".credentials.json"), "{}");
    expect((await doctor(home, ["--agent", "claude", "--claude-bin", claude])).code).toBe(5);
    writeFileSync(join(home, ".claude", ".credentials.json"), JSON.stringify({ claudeAiOauth: { accessToken: SECRET, expiresAt: 1 } }));
    const ran = await doctor(home, ["--agent", "claude", "--claude-bin", claude]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain("found ~/.claude/.credentials.json");
    expect(ran.stdout).not.toContain(SECRET);
    // $CLAUDE_CONFIG_DIR moves it.
    const moved = await doctor(home, ["--agent", "claude", "--claude-bin", claude], { CLAUDE_CONFIG_DIR: join(home, "elsewhere") });
    expect(moved.code).toBe(5);
  });

  test("pi: its auth.json, or a provider key; the gateway's key missing is said", async () => {
    const home = box();
    const agentDir = join(home, "pi-agent");
    mkdirSync(agentDir);
    writeFileSync(join(agentDir, "auth.json"), JSON.stringify({ anthropic: { type: "api_key", key: SECRET } }));
    const filed = await doctor(home, ["--agent", "pi", "--pi-bin", pi], { PI_CODING_AGENT_DIR: agentDir });
    expect(filed.code).toBe(0);
    expect(filed.stdout).toContain("ok   pi credentials found $PI_CODING_AGENT_DIR/auth.json");
    const keyed = await doctor(box(), ["--agent", "pi", "--pi-bin", pi], { ANTHROPIC_API_KEY: SECRET });
    expect(keyed.code).toBe(0);
    expect(keyed.stdout).toContain(
      "warn pi credentials found ANTHROPIC_API_KEY; the gateway openrouter needs OPENROUTER_API_KEY for a routed --model",
    );
    const routed = await doctor(box(), ["--agent", "pi", "--pi-bin", pi], { OPENROUTER_API_KEY: SECRET });
    expect(routed.stdout).toContain("ok   pi credentials found OPENROUTER_API_KEY\n");
    for (const ran of [filed, keyed, routed]) expect(ran.stdout).not.toContain(SECRET);
  }, 90_000);

  test("a version outside the tested range is a warning, not a failure", async () => {
    const home = box();
    const newer = join(home, "claude");
    writeFileSync(newer, "#!/bin/sh\necho '9.1.0 (Claude Code)'\n");
    chmodSync(newer, 0o755);
    const ran = await doctor(home, ["--agent", "claude", "--claude-bin", newer], { ANTHROPIC_API_KEY: SECRET });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain("warn claude version     9.1.0 (Claude Code): newer than tested (2.1.197); it may work");
  });

  test("--agent codex when codex is not installed: FAIL, exit 5", async () => {
    const ran = await doctor(box(), ["--agent", "codex"], { OPENAI_API_KEY: SECRET });
    expect(ran.code).toBe(5);
    expect(ran.stdout).toContain("FAIL codex");
  });

  const codex = peerOrSkip("codex");
  const gemini = peerOrSkip("gemini");
  test.skipIf(codex === null || gemini === null)(
    "codex and gemini: their keys and login files",
    async () => {
      const home = box();
      const bins = ["--codex-bin", codex ?? "", "--gemini-bin", gemini ?? ""];
      const none = JSON.parse((await doctor(home, ["--json", ...bins])).stdout) as Report;
      expect(none.ready).toEqual([]);
      const keys = JSON.parse(
        (await doctor(home, ["--json", ...bins], { CODEX_API_KEY: SECRET, GEMINI_API_KEY: SECRET })).stdout,
      ) as Report;
      expect(keys.ready).toEqual(["codex", "gemini"]);
      expect(agent(keys, "codex")?.credentials).toEqual(["CODEX_API_KEY"]);
      expect(agent(keys, "gemini")?.credentials).toEqual(["GEMINI_API_KEY"]);
      mkdirSync(join(home, ".codex"));
      writeFileSync(join(home, ".codex", "auth.json"), JSON.stringify({ OPENAI_API_KEY: null, tokens: { access_token: SECRET } }));
      mkdirSync(join(home, ".gemini"), { recursive: true });
      writeFileSync(join(home, ".gemini", "oauth_creds.json"), JSON.stringify({ refresh_token: SECRET }));
      const files = JSON.parse((await doctor(home, ["--json", ...bins])).stdout) as Report;
      expect(agent(files, "codex")?.credentials).toEqual(["~/.codex/auth.json"]);
      expect(agent(files, "gemini")?.credentials).toEqual(["~/.gemini/oauth_creds.json"]);
      expect(files.ok).toBe(true);
    },
    60_000,
  );

  test("the tested range is the pinned versions the suites run", () => {
    const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).devDependencies;
    const peers = JSON.parse(readFileSync(join(ROOT, "test", "peers", "package.json"), "utf8")).dependencies;
    expect(TESTED.claude?.low).toBe(root["@anthropic-ai/claude-code"]);
    expect(TESTED.pi?.low).toBe(root["@mariozechner/pi-coding-agent"]);
    expect(TESTED.codex?.low).toBe(peers["@openai/codex"]);
    expect(TESTED.gemini?.low).toBe(peers["@google/gemini-cli"]);
    expect(TESTED.opencode?.low).toBe(peers["opencode-ai"]);
    // acp is a protocol: the agents it was tested with are gemini and opencode above, no version of its own.
    expect(TESTED.acp).toBeNull();
  });
});
