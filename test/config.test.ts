// agentport.json: validation errors (one line, the file and the field), how the
// file is found, the layers (flag > environment > file > default), `config`,
// and one named agent run as pi and as claude against the fakes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, findConfig, parseConfig } from "../src/config/load.ts";
import { resolveSettings } from "../src/config/resolve.ts";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, BIN, fakeProject, tempDir, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

type World = FakeProject;

/** A project (a repository root, so the config search stops there), the two fakes, private homes. */
function world(): World {
  const w = fakeProject("agentport-config-", { AGENTPORT_GATEWAY: "openrouter" });
  made.push(w.root);
  return w;
}

/** Write a config into the project; the default agentport.json is also trusted (`agentport trust`), as a user would. */
const writeConfig = (w: World, config: unknown, name = "agentport.json") => {
  const path = join(w.proj, name);
  writeFileSync(path, typeof config === "string" ? config : JSON.stringify(config, null, 2));
  if (name === "agentport.json") {
    const trusted = Bun.spawnSync([BIN, "trust", path], { env: { ...process.env, ...w.env }, stdout: "ignore", stderr: "ignore" });
    if (trusted.exitCode !== 0) throw new Error(`agentport trust ${path} failed`);
  }
  return path;
};

const invocations = (w: World): { fake: string; argv: string[]; cwd: string; max_thinking_tokens: string | null }[] =>
  existsSync(w.log)
    ? readFileSync(w.log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((r) => !r.argv.includes("--version") && !r.argv.includes("--help"))
    : [];

const ROSTER = {
  default_agent: "builder",
  spec_folder: "specs",
  gates: { test: "bun test", types: ["tsc", "--noEmit"] },
  agents: {
    builder: {
      agent: "pi",
      model: "anthropic/claude-sonnet-4",
      thinking: "high",
      tools: ["read", "bash", "edit", "write", "ls"],
      timeout: 600,
      budget: { max_tokens: 400000, mode: "warn" },
      nudges: 1,
    },
    reviewer: { agent: "claude", model: "anthropic/claude-opus-4", thinking: "max", tools: ["read", "grep", "find"] },
  },
};

describe("validation: one line naming the file and the field", () => {
  const file = "/p/agentport.json";
  const error = (config: unknown): string => {
    try {
      parseConfig(typeof config === "string" ? config : JSON.stringify(config), file);
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const message = (e as Error).message;
      expect(message.split("\n")).toHaveLength(1);
      expect(message.startsWith(`${file}: `)).toBe(true);
      return message;
    }
    throw new Error("no error");
  };

  test.each([
    ["unknown key in an agent", { agents: { b: { agent: "pi", timout: 3 } } }, "agents.b.timout: unknown key (known: agent,"],
    [
      "unknown key at the top",
      { agent: {} },
      "agent: unknown key (known: $schema, default_agent, spec_folder, ledger, gates, env_file, env_allow, bon, agents, prices)",
    ],
    ["unknown key in bon", { bon: { setups: [] } }, "bon.setups: unknown key (known: setup, copy)"],
    [
      "unknown key in a budget",
      { agents: { b: { agent: "pi", budget: { max_tokens: 1, mod: "warn" } } } },
      "agents.b.budget.mod: unknown key",
    ],
    [
      "wrong type: a string for a number",
      { agents: { b: { agent: "pi", timeout: "600" } } },
      'agents.b.timeout: expected a number, got a string ("600")',
    ],
    [
      "wrong type: a string for a list",
      { agents: { b: { agent: "pi", tools: "read,bash" } } },
      'agents.b.tools: expected an array, got a string ("read,bash")',
    ],
    [
      "wrong type: a list item",
      { agents: { b: { agent: "pi", tools: ["read", 3] } } },
      "agents.b.tools[1]: expected a string, got a number (3)",
    ],
    [
      "unknown agent kind",
      { agents: { b: { agent: "gpt" } } },
      'agents.b.agent: expected one of claude, pi, codex, gemini, opencode, acp, got a string ("gpt")',
    ],
    ["missing agent kind", { agents: { b: { model: "x" } } }, "agents.b.agent: missing (one of claude, pi, codex, gemini, opencode, acp)"],
    ["unknown default agent", { default_agent: "x", agents: { b: { agent: "pi" } } }, 'default_agent: no agent named "x" (known: b)'],
    [
      "unknown thinking level",
      { agents: { b: { agent: "pi", thinking: "huge" } } },
      "agents.b.thinking: expected one of off, minimal, low, medium, high, xhigh, max",
    ],
    ["nudges out of bounds", { agents: { b: { agent: "pi", nudges: 11 } } }, "agents.b.nudges: must be at most 10, got a number (11)"],
    [
      "a bad profile key",
      { agents: { b: { agent: "pi", profile: ["A-B"] } } },
      'agents.b.profile[0]: expected an environment variable name, got a string ("A-B")',
    ],
    ["a bad agent name", { agents: { "b c": { agent: "pi" } } }, 'agents: "b c" is not a valid name'],
    [
      "a bad schema value",
      { agents: { b: { agent: "pi", schema: 3 } } },
      "agents.b.schema: expected a JSON Schema file path, or true for the default envelope",
    ],
    ["not JSON", "{,}", "not JSON"],
  ])("%s", (_, config, expected) => {
    expect(error(config)).toContain(`${file}: ${expected}`);
  });

  test("a full roster is valid", () => {
    const config = parseConfig(JSON.stringify(ROSTER), file);
    expect(Object.keys(config.agents)).toEqual(["builder", "reviewer"]);
    expect(parseConfig("{}", file).agents).toEqual({});
  });
});

describe("finding the file", () => {
  test("from the working folder up to the repository root, and no further", () => {
    const w = world();
    const sub = join(w.proj, "src", "deep");
    mkdirSync(sub, { recursive: true });
    expect(findConfig(sub, undefined, {})).toBeNull();
    const path = writeConfig(w, {});
    expect(findConfig(sub, undefined, {})).toEqual({ path, origin: "found" });
    // Above the root (.git) nothing is looked for.
    writeFileSync(join(w.root, "agentport.json"), "{}");
    rmSync(path);
    expect(findConfig(sub, undefined, {})).toBeNull();
  });

  test("outside any repository only the starting folder is searched, never above", () => {
    const outside = realpathSync(tempDir("agentport-norepo-"));
    made.push(outside);
    const sub = join(outside, "a", "b");
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(outside, "a", "agentport.json"), "{}");
    expect(findConfig(sub, undefined, {})).toBeNull();
    writeFileSync(join(sub, "agentport.json"), "{}");
    expect(findConfig(sub, undefined, {})).toEqual({ path: join(sub, "agentport.json"), origin: "found" });
  });

  test("--config, then $AGENTPORT_CONFIG; a missing file is an error", () => {
    const w = world();
    const other = writeConfig(w, {}, "other.json");
    expect(findConfig(w.proj, other, { AGENTPORT_CONFIG: "/nope.json" })).toEqual({ path: other, origin: "flag" });
    expect(findConfig(w.proj, undefined, { AGENTPORT_CONFIG: other })).toEqual({ path: other, origin: "environment" });
    expect(() => findConfig(w.proj, join(w.proj, "missing.json"), {})).toThrow("--config");
    expect(() => findConfig(w.proj, undefined, { AGENTPORT_CONFIG: "/nope.json" })).toThrow("AGENTPORT_CONFIG=/nope.json: no such file");
  });
});

describe("a named agent's values, typed (no round trip through flag strings)", () => {
  test("lists kept, budget spread, the schema made absolute against the config file, and checked when used", () => {
    const w = world();
    writeFileSync(
      join(w.proj, "env.schema.json"),
      JSON.stringify({ type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] }),
    );
    const path = writeConfig(w, { agents: { a: { ...ROSTER.agents.builder, schema: "env.schema.json", profile: ["KEY"] } } });
    const config = parseConfig(readFileSync(path, "utf8"), path);
    const agent = config.agents.a;
    if (agent === undefined) throw new Error("no agent a");
    const resolved = resolveSettings({ flags: {}, env: {}, named: { name: "a", agent, file: path, dir: w.proj } });
    if (!resolved.ok) throw new Error(resolved.issues.join("; "));
    expect(resolved.settings).toMatchObject({
      agent: "pi",
      model: "anthropic/claude-sonnet-4",
      thinking: "high",
      tools: ["read", "bash", "edit", "write", "ls"],
      timeoutMs: 600_000,
      budget: { maxTokens: 400000, mode: "warn" },
      profile: ["KEY"],
      nudges: 1,
      envelope: { kind: "file", path: join(w.proj, "env.schema.json") },
    });
  });
});

describe("the CLI", () => {
  let w: World;
  beforeAll(() => {
    w = world();
  });

  const oneLineError = (stderr: string): string => {
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    return lines[0] ?? "";
  };

  test.each([
    ["unknown key", { agents: { builder: { agent: "pi", modle: "x" } } }, "agents.builder.modle: unknown key"],
    ["wrong type", { agents: { builder: { agent: "pi", stall: true } } }, "agents.builder.stall: expected a number, got true"],
    [
      "unknown agent kind",
      { agents: { builder: { agent: "gpt" } } },
      "agents.builder.agent: expected one of claude, pi, codex, gemini, opencode, acp",
    ],
  ])("config and run refuse a file with an %s: one line, exit 2, zero tokens", async (_, config, expected) => {
    const path = writeConfig(w, config, "bad.json");
    for (const args of [
      ["config", "--config", path],
      ["run", "--config", path, "--as", "builder", "hi"],
    ]) {
      const ran = await agentport(args, { cwd: w.proj, env: w.env });
      expect(ran.code).toBe(2);
      expect(oneLineError(ran.stderr)).toContain(`${path}: ${expected}`);
    }
    expect(invocations(w)).toEqual([]);
  });

  test("--as an unknown name: one line naming it, the known ones and the file (exit 2)", async () => {
    const path = writeConfig(w, ROSTER);
    const ran = await agentport(["run", "--as", "planner", "hi"], { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(2);
    expect(oneLineError(ran.stderr)).toContain(`--as planner: no agent named "planner" (known: builder, reviewer) in ${path}`);
    const none = await agentport(["run", "--as", "builder", "hi"], { cwd: w.root, env: { ...w.env, HOME: w.root } });
    expect(none.code).toBe(2);
    expect(oneLineError(none.stderr)).toContain("--as builder: no agentport.json found");
  });

  test("config --json: every value with its source (default, file, environment, flag)", async () => {
    const path = writeConfig(w, ROSTER);
    const ran = await agentport(["config", "--json", "--timeout", "30"], { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(0);
    const report = JSON.parse(ran.stdout);
    expect(report.config).toEqual({
      path,
      origin: "found",
      sha256: new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex"),
      trust: "trusted",
    });
    expect(report.ignored_config).toBeNull();
    expect(report.name).toEqual({ value: "builder", source: "file" });
    expect(report.spec_folder).toBe(join(w.proj, "specs"));
    expect(report.gates).toEqual(ROSTER.gates);
    expect(report.settings.agent).toEqual({ value: "pi", source: "file" });
    expect(report.settings.timeout).toEqual({ value: 30, source: "flag" });
    expect(report.settings.gateway).toEqual({ value: "openrouter", source: "environment" });
    expect(report.settings.stall).toEqual({ value: null, source: "default" });
    expect(report.settings.nudges).toEqual({ value: 1, source: "file" });
    expect(report.settings.budget).toEqual({ value: "warn", source: "file" });
    expect(report.translated).toEqual({
      agent: "pi",
      model: "anthropic/claude-sonnet-4",
      tools: ["read", "bash", "edit", "write", "ls"],
      thinking: "high",
      env: {},
    });

    const asClaude = JSON.parse(
      (await agentport(["config", "--json", "--as", "builder", "--agent", "claude"], { cwd: w.proj, env: w.env })).stdout,
    );
    expect(asClaude.name).toEqual({ value: "builder", source: "flag" });
    expect(asClaude.settings.agent).toEqual({ value: "claude", source: "flag" });
    expect(asClaude.translated).toEqual({
      agent: "claude",
      model: "claude-sonnet-4",
      tools: ["Read", "Bash", "Edit", "Write"],
      env: { MAX_THINKING_TOKENS: "16384" },
    });

    const text = await agentport(["config", "--as", "reviewer"], { cwd: w.proj, env: w.env });
    expect(text.code).toBe(0);
    expect(text.stdout).toContain("as claude: --model claude-opus-4 --allowedTools Read,Grep,Glob MAX_THINKING_TOKENS=32000");
    expect(text.stdout).toMatch(/thinking\s+max\s+file/);
  });
});

describe("one named agent, run as pi then as claude by changing one word", () => {
  test.each(["pi", "claude"] as const)("agent: %s", async (kind) => {
    const w = world();
    writeConfig(w, { default_agent: "builder", agents: { builder: { ...ROSTER.agents.builder, agent: kind } } });
    const ran = await agentport(["run", "--json", "--progress", "off", "do it"], {
      cwd: w.proj,
      env: { ...w.env, AGENTPORT_FAKE_SCENARIO: "text" },
    });
    expect(ran.code).toBe(0);
    const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
    expect(verdict).toMatchObject({ agent: kind, ok: true, status: "completed" });
    expect(verdict.text).toBe(kind === "pi" ? "Hello from the fake pi." : "Hello from the fake claude.");
    expect(verdict.summary.budget_mode).toBe("warn");
    const [call, ...more] = invocations(w);
    expect(more).toEqual([]);
    expect(call?.cwd).toBe(w.proj);
    if (kind === "pi") {
      expect(call?.fake).toBe("fake-pi");
      expect(call?.argv.join(" ")).toContain(
        "--model openrouter/anthropic/claude-sonnet-4 --thinking high --tools read,bash,edit,write,ls",
      );
      expect(call?.max_thinking_tokens).toBeNull();
    } else {
      expect(call?.fake).toBe("fake-claude");
      expect(call?.argv.join(" ")).toContain("--model claude-sonnet-4 --allowedTools=Read,Bash,Edit,Write");
      expect(call?.max_thinking_tokens).toBe("16384");
    }
    // The ledger says which agent ran, with the roster's model id.
    const sessions = (await agentport(["sessions", "--json"], { cwd: w.proj, env: w.env })).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(sessions).toHaveLength(1);
    expect(sessions[0]).toMatchObject({ agent: kind, model: "anthropic/claude-sonnet-4", cwd: w.proj });
  });

  test("a flag overrides the named agent: --agent claude --thinking low --tools grep", async () => {
    const w = world();
    writeConfig(w, ROSTER);
    const ran = await agentport(
      ["run", "--as", "builder", "--agent", "claude", "--thinking", "low", "--tools", "grep", "--progress", "off", "do it"],
      {
        cwd: w.proj,
        env: { ...w.env, AGENTPORT_FAKE_SCENARIO: "text" },
      },
    );
    expect(ran.code).toBe(0);
    const [call] = invocations(w);
    expect(call?.fake).toBe("fake-claude");
    expect(call?.argv).toContain("--allowedTools=Grep");
    expect(call?.max_thinking_tokens).toBe("4096");
  });

  test("a bad --thinking or --nudges is a usage error", async () => {
    const w = world();
    for (const [flag, value, message] of [
      ["--thinking", "huge", "--thinking must be one of off, minimal, low, medium, high, xhigh, max"],
      ["--nudges", "11", "--nudges must be a whole number from 0 to 10"],
      ["--nudges", "-1", "--nudges must be a whole number from 0 to 10"],
    ]) {
      const ran = await agentport(["run", flag as string, value as string, "hi"], { cwd: w.proj, env: w.env });
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain(message as string);
    }
    expect(invocations(w)).toEqual([]);
  });
});
