// The roster's words, translated for each agent: tools, thinking, model. Tables.
import { describe, expect, test } from "bun:test";
import {
  claudeModel,
  claudeThinkingEnv,
  claudeTools,
  CLAUDE_TOOLS,
  isThinkingLevel,
  piThinking,
  piTools,
  PI_TOOLS,
  THINKING_LEVELS,
  THINKING_TOKENS,
  translate,
  type ThinkingLevel,
} from "../src/core/translate.ts";
import { claudeArgv, claudeInteractiveArgv } from "../src/agents/claude/argv.ts";

describe("tools", () => {
  test.each([
    ["read", "Read"],
    ["bash", "Bash"],
    ["edit", "Edit"],
    ["write", "Write"],
    ["grep", "Grep"],
    ["find", "Glob"],
    ["ls", "Bash"],
  ] as const)("pi %s is claude %s", (pi, claude) => {
    expect(CLAUDE_TOOLS[pi]).toBe(claude);
    expect(claudeTools([pi])).toEqual([claude]);
  });

  test("every pi tool has a claude name", () => {
    expect(Object.keys(CLAUDE_TOOLS).sort()).toEqual([...PI_TOOLS].sort());
  });

  test.each([
    [
      ["read", "bash", "edit", "write", "grep", "find", "ls"],
      ["Read", "Bash", "Edit", "Write", "Grep", "Glob"],
    ],
    [["ls", "bash"], ["Bash"]],
    [
      ["bash", "ls", "read"],
      ["Bash", "Read"],
    ],
    [
      ["find", "read", "find"],
      ["Glob", "Read"],
    ],
    // Claude's own names and anything else pass through unchanged.
    [
      ["Read", "read", "WebFetch"],
      ["Read", "WebFetch"],
    ],
    [
      ["Bash(git:*)", "mcp__github__list"],
      ["Bash(git:*)", "mcp__github__list"],
    ],
    [[], []],
  ])("claude: %j → %j (in order, de-duplicated)", (given, expected) => {
    expect(claudeTools(given)).toEqual(expected);
  });

  test.each([
    [
      ["read", "bash", "ls"],
      ["read", "bash", "ls"],
    ],
    [
      ["Read", "Bash", "Edit", "Write", "Grep", "Glob"],
      ["read", "bash", "edit", "write", "grep", "find"],
    ],
    [
      ["Read", "read", "report_phase"],
      ["read", "report_phase"],
    ],
    [["bash", "bash"], ["bash"]],
  ])("pi: %j → %j", (given, expected) => {
    expect(piTools(given)).toEqual(expected);
  });
});

describe("thinking", () => {
  test.each([
    ["off", 0, "off"],
    ["minimal", 1024, "minimal"],
    ["low", 4096, "low"],
    ["medium", 8192, "medium"],
    ["high", 16384, "high"],
    ["xhigh", 24576, "xhigh"],
    ["max", 32000, "xhigh"],
  ] as const)("%s: claude MAX_THINKING_TOKENS=%d, pi --thinking %s", (level, tokens, pi) => {
    expect(THINKING_TOKENS[level]).toBe(tokens);
    expect(claudeThinkingEnv(level)).toEqual({ MAX_THINKING_TOKENS: String(tokens) });
    expect(piThinking(level)).toBe(pi);
  });

  test("the levels, and nothing else", () => {
    expect([...THINKING_LEVELS]).toEqual(["off", "minimal", "low", "medium", "high", "xhigh", "max"]);
    for (const level of THINKING_LEVELS) expect(isThinkingLevel(level)).toBe(true);
    for (const bogus of ["", "High", "huge", 3, null]) expect(isThinkingLevel(bogus)).toBe(false);
    expect(claudeThinkingEnv(undefined)).toEqual({});
    expect(piThinking(undefined)).toBeUndefined();
  });
});

describe("model", () => {
  test.each([
    ["anthropic/claude-sonnet-4", "claude-sonnet-4"],
    ["openrouter/anthropic/claude-opus-4", "claude-opus-4"],
    ["claude-sonnet-4", "claude-sonnet-4"],
    ["sonnet", "sonnet"],
  ])("claude: %s → %s", (given, expected) => {
    expect(claudeModel(given)).toBe(expected);
    expect(claudeModel(claudeModel(given))).toBe(expected);
  });
});

describe("one named agent, two agents", () => {
  const words = { model: "anthropic/claude-sonnet-4", tools: ["read", "bash", "ls", "find"], thinking: "high" as ThinkingLevel };
  test("as pi: the route stays (the gateway prefix is core/pi/argv.ts's), tools and level as they are", () => {
    expect(translate("pi", words)).toEqual({
      agent: "pi",
      model: "anthropic/claude-sonnet-4",
      tools: ["read", "bash", "ls", "find"],
      thinking: "high",
      env: {},
    });
  });
  test("as claude: the bare model, Claude's tools, a thinking budget", () => {
    expect(translate("claude", words)).toEqual({
      agent: "claude",
      model: "claude-sonnet-4",
      tools: ["Read", "Bash", "Glob"],
      env: { MAX_THINKING_TOKENS: "16384" },
    });
  });
  test("nothing asked, nothing said", () => {
    expect(translate("claude", {})).toEqual({ agent: "claude", model: undefined, tools: undefined, env: {} });
    expect(translate("pi", { tools: [] })).toEqual({ agent: "pi", model: undefined, tools: undefined, thinking: undefined, env: {} });
  });
  test("claude argv, headless and interactive", () => {
    const t = translate("claude", words);
    expect(claudeArgv({ bin: "claude", sessionId: "s", model: t.model, tools: t.tools })).toEqual([
      "claude",
      "-p",
      "--output-format",
      "stream-json",
      "--verbose",
      "--session-id",
      "s",
      "--model",
      "claude-sonnet-4",
      "--allowedTools=Read,Bash,Glob",
    ]);
    expect(claudeInteractiveArgv({ bin: "claude", sessionId: "s", model: "claude-sonnet-4" })).toEqual([
      "claude",
      "--resume",
      "s",
      "--model",
      "claude-sonnet-4",
    ]);
    expect(claudeInteractiveArgv({ bin: "claude", sessionId: "s" })).toEqual(["claude", "--resume", "s"]);
  });
});
