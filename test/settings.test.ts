// The settings of a run, resolved once by one pure function, in-process:
// flag > the session's birth request > environment > named agent > default,
// and every bad value an issue naming where it came from.
import { describe, expect, test } from "bun:test";
import { DEFAULT_TIMEOUT_S, resolveSettings, type SettingsInput, type Settings, type Sources } from "../src/config/resolve.ts";
import { asFlags, birthRequest } from "../src/config/request.ts";
import type { NamedAgent } from "../src/config/schema.ts";
import { requestIssues } from "../src/agents/settings.ts";
import { adapterOf } from "../src/agents/table.ts";

const named = (agent: NamedAgent) => ({ name: "builder", agent, file: "/p/agentport.json", dir: "/p" });

function settled(input: Partial<SettingsInput>): { settings: Settings; sources: Sources } {
  const resolved = resolveSettings({ flags: {}, env: {}, ...input });
  if (!resolved.ok) throw new Error(resolved.issues.join("; "));
  return resolved;
}

/** The resolver's issues, else what the chosen agent's row refuses (as agentport checks them, in that order). */
function issues(input: Partial<SettingsInput>): string[] {
  const resolved = resolveSettings({ flags: {}, env: {}, ...input });
  if (!resolved.ok) return resolved.issues;
  const { agent } = resolved.settings;
  return requestIssues(agent, adapterOf(agent).settings, resolved.settings, resolved.sources);
}

describe("precedence: flag > session > environment > file > default", () => {
  const file = named({ agent: "pi", model: "m/file", gateway: "g-file", timeout: 600, tools: ["read"], permission_mode: undefined });
  test.each<[string, Partial<SettingsInput>, keyof Settings, unknown, string]>([
    ["default", {}, "gateway", "openrouter", "default"],
    ["file over default", { named: file }, "gateway", "g-file", "file"],
    ["environment over file", { named: file, env: { AGENTPORT_GATEWAY: "g-env" } }, "gateway", "g-env", "environment"],
    ["an empty AGENTPORT_GATEWAY is a value (no prefix)", { named: file, env: { AGENTPORT_GATEWAY: "" } }, "gateway", "", "environment"],
    ["session over environment", { session: { gateway: "" }, env: { AGENTPORT_GATEWAY: "g-env" } }, "gateway", "", "session"],
    ["flag over session", { flags: { gateway: "g-flag" }, session: { gateway: "" } }, "gateway", "g-flag", "flag"],
    ["file timeout in seconds", { named: file }, "timeoutMs", 600_000, "file"],
    ["default timeout", {}, "timeoutMs", DEFAULT_TIMEOUT_S * 1000, "default"],
    ["--timeout 0 is none", { flags: { timeout: "0" }, named: file }, "timeoutMs", null, "flag"],
    ["file model, flag none", { named: file }, "model", "m/file", "file"],
    ["session model over file", { named: file, session: { model: "m/born" } }, "model", "m/born", "session"],
    ["flag model over all", { flags: { model: "m/flag" }, named: file, session: { model: "m/born" } }, "model", "m/flag", "flag"],
    ["an empty bin variable is unset", { env: { AGENTPORT_PI_BIN: "" } }, "piBin", null, "default"],
    ["a bin variable", { env: { AGENTPORT_PI_BIN: "/x/pi" } }, "piBin", "/x/pi", "environment"],
    ["max-cost in USD becomes micro-USD", { flags: { "max-cost": "0.25" } }, "maxCostMicroUsd", 250_000, "flag"],
    [
      "repeatable append-system-prompt keeps order",
      { flags: { "append-system-prompt": ["a", "@b.md"] } },
      "appendSystemPrompt",
      ["a", "@b.md"],
      "flag",
    ],
    [
      "the file's @FILE is relative to the config file",
      { named: named({ agent: "claude", append_system_prompt: "@sys.md" }) },
      "appendSystemPrompt",
      ["@/p/sys.md"],
      "file",
    ],
  ])("%s", (_, input, key, value, source) => {
    const { settings, sources } = settled(input);
    expect(settings[key] as unknown).toEqual(value);
    const flagKey =
      { timeoutMs: "timeout", piBin: "pi-bin", maxCostMicroUsd: "max-cost", appendSystemPrompt: "append-system-prompt" }[key as string] ??
      key;
    expect(sources[flagKey as keyof Sources]).toBe(source as Sources[keyof Sources]);
  });

  test("--schema or --envelope replaces the file's envelope; --no-envelope turns it off", () => {
    const file = named({ agent: "pi", schema: "s.json" });
    expect(settled({ named: file }).settings.envelope).toEqual({
      kind: "file",
      path: "/p/s.json",
      label: "/p/agentport.json: agents.builder.schema",
    });
    expect(settled({ named: file, flags: { envelope: true } }).settings.envelope).toEqual({ kind: "default" });
    expect(settled({ named: file, flags: { envelope: false } }).settings.envelope).toEqual({ kind: "none" });
    expect(settled({ named: file, flags: { schema: "x.json" } }).settings.envelope).toMatchObject({ kind: "file", path: "x.json" });
  });

  test("the budget: flags and the file's budget object meet in one typed value", () => {
    expect(
      settled({ named: named({ agent: "pi", budget: { max_tokens: 10, grace: 3 } }), flags: { budget: "warn" } }).settings.budget,
    ).toEqual({
      maxTokens: 10,
      mode: "warn",
      cacheReadWeight: 0.1,
      graceMs: 3000,
    });
    expect(settled({}).settings.budget).toBeNull();
  });

  test("a resumed session keeps the agent it was born with; a named agent of the other kind is an issue", () => {
    expect(settled({ agent: "pi", flags: { agent: "claude" } }).settings.agent).toBe("pi");
    expect(issues({ agent: "pi", named: named({ agent: "claude" }) })).toEqual([
      "--as builder: it is a claude agent, and this session is pi's",
    ]);
  });

  test("pass-through: the command line's, else the session's", () => {
    expect(
      settled({ passThrough: ["--add-dir", "x"], session: { "pass-through": ["--mcp-config", "m.json"] } }).settings.passThrough,
    ).toEqual(["--add-dir", "x"]);
    expect(settled({ session: { "pass-through": ["--mcp-config", "m.json"] } }).settings.passThrough).toEqual(["--mcp-config", "m.json"]);
  });
});

describe("issues: every one, each naming its flag, variable or field", () => {
  test.each<[string, Partial<SettingsInput>, string]>([
    ["a bad timeout", { flags: { timeout: "soon" } }, '--timeout must be a number of seconds (0 for none), got "soon"'],
    ["a bad stall", { flags: { stall: "0" } }, '--stall must be a positive number of seconds, got "0"'],
    ["a bad thinking level", { flags: { thinking: "huge" } }, "--thinking must be one of off, minimal, low, medium, high, xhigh, max"],
    ["a bad nudge count", { flags: { nudges: "11" } }, "--nudges must be a whole number from 0 to 10"],
    [
      "a bad permission mode",
      { flags: { "permission-mode": "yolo" } },
      "--permission-mode must be one of default, acceptEdits, plan, bypassPermissions, dontAsk",
    ],
    [
      "a permission mode for pi",
      { flags: { agent: "pi", "permission-mode": "acceptEdits" } },
      "--permission-mode: pi has no permission modes (it is Claude Code's flag); choose what pi may do with --tools",
    ],
    [
      "a permission mode for pi from the file",
      { named: named({ agent: "pi", permission_mode: "plan" }) },
      "permission_mode (agentport.json): pi has no permission modes",
    ],
    ["a bad max-turns", { flags: { "max-turns": "0" } }, '--max-turns must be a positive integer, got "0"'],
    ["a bad max-cost", { flags: { "max-cost": "free" } }, '--max-cost must be a positive amount of USD (like 0.50), got "free"'],
    ["a budget flag without --max-tokens", { flags: { budget: "warn" } }, "--budget needs --max-tokens"],
    [
      "an unknown tool for pi",
      { flags: { agent: "pi", tools: "read,fly" } },
      '--tools: unknown tool "fly" for pi (known: read, bash, edit, write, grep, find, ls, Read, Bash, Edit, Write, Grep, Glob)',
    ],
    ["a claude-only tool for pi", { flags: { agent: "pi", tools: "WebFetch" } }, '--tools: unknown tool "WebFetch" for pi'],
    ["an unknown tool for claude", { flags: { tools: "Read,Fly" } }, '--tools: unknown tool "Fly" for claude (known: read, bash'],
    [
      "a contract-breaking pass-through for claude",
      { passThrough: ["--output-format=json"] },
      "-- --output-format: not passed to claude: agentport reads claude's stream-json output",
    ],
    ["--verbose passed through to claude", { passThrough: ["--verbose"] }, "-- --verbose: not passed to claude"],
    [
      "--mode passed through to pi",
      { flags: { agent: "pi" }, passThrough: ["--mode", "text"] },
      "-- --mode: not passed to pi: agentport runs pi with --mode json",
    ],
    ["--session passed through to pi", { flags: { agent: "pi" }, passThrough: ["--session", "x"] }, "-- --session: not passed to pi"],
    ["a bad variable", { flags: { loop: "maybe" } }, '--loop must be one of on, off, got "maybe"'],
  ])("%s", (_, input, expected) => {
    const found = issues(input);
    expect(found).toHaveLength(1);
    expect(found[0]).toContain(expected);
  });

  test("several bad values: all of them", () => {
    expect(issues({ flags: { timeout: "x", stall: "y", tools: "Fly" } })).toHaveLength(3);
  });

  test.each([
    [
      "claude",
      "Read,Write,Edit,Bash,Glob,Grep,WebFetch,WebSearch,NotebookEdit,Task,TodoWrite,mcp__github__list_issues,mcp__fs,Bash(git:*),read,ls",
    ],
    ["pi", "read,bash,edit,write,grep,find,ls,Read,Glob"],
  ])("%s knows its tools in both vocabularies: %s", (agent, tools) => {
    expect(issues({ flags: { agent, tools } })).toEqual([]);
  });
});

describe("the birth request round-trips through the session layer", () => {
  test("what a session is born with comes back the same on resume", () => {
    const born = settled({
      flags: {
        agent: "pi",
        model: "standin/m",
        direct: true,
        tools: "read,bash",
        thinking: "high",
        profile: "K",
        envelope: true,
        "max-turns": "3",
        "max-cost": "0.5",
        "append-system-prompt": ["be brief"],
      },
      passThrough: ["--no-context-files"],
    }).settings;
    const request = birthRequest(born);
    expect(request).toMatchObject({
      model: "standin/m",
      direct: true,
      gateway: "openrouter",
      tools: ["read", "bash"],
      "max-cost": 0.5,
      "pass-through": ["--no-context-files"],
    });
    const resumed = settled({ agent: "pi", session: JSON.parse(JSON.stringify(request)), env: { AGENTPORT_GATEWAY: "other" } }).settings;
    for (const key of [
      "model",
      "direct",
      "gateway",
      "tools",
      "thinking",
      "profile",
      "envelope",
      "maxTurns",
      "maxCostMicroUsd",
      "appendSystemPrompt",
      "passThrough",
    ] as const) {
      expect(resumed[key]).toEqual(born[key]);
    }
    // A flag still overrides the birth request.
    expect(settled({ agent: "pi", session: request, flags: { model: "other/m" } }).settings.model).toBe("other/m");
  });

  test("asFlags shows each value in its flag's units", () => {
    const shown = asFlags(settled({ flags: { timeout: "90", "max-cost": "1.5", loop: "off" } }).settings);
    expect(shown).toMatchObject({ timeout: 90, "max-cost": 1.5, loop: "off", "loop-repeat": null, linger: 10, agent: "claude" });
    expect(asFlags(settled({ flags: { timeout: "0" } }).settings).timeout).toBe(0);
  });
});
