// What a user of `claude -p` reaches for, through agentport, with the real
// Claude Code 2.1.197 against the loopback Anthropic stand-in: permission
// modes and refusals, turn and cost limits, system-prompt additions,
// pass-through arguments, checked tool names.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { BIN, ROOT } from "./helpers.ts";
import { claudeEnv, startAnthropicStandin } from "./standins/anthropic.ts";
import type { Script, Standin } from "./standins/util.ts";
import { removeTempDirs, spawnCollect, tempDir } from "./standins/util.ts";

const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

interface World {
  dir: string;
  project: string;
  env: Record<string, string>;
  standin: Standin;
}

function world(script: (project: string) => Script): World {
  const dir = tempDir("agentport-e2e-claude-flags-");
  const project = join(dir, "project");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "notes.txt"), "line one\n");
  const standin = startAnthropicStandin(script(project));
  standins.push(standin);
  return {
    dir,
    project,
    standin,
    env: { ...claudeEnv(dir, standin.url), AGENTPORT_HOME: join(dir, "agentport"), AGENTPORT_CLAUDE_BIN: CLAUDE },
  };
}

async function run(w: World, args: string[], stdin = "Do it") {
  const ran = await spawnCollect([BIN, "run", "--agent", "claude", "--json", "--progress", "lines", ...args], {
    cwd: w.project,
    env: w.env,
    stdin,
    timeoutMs: 60_000,
  });
  const verdict: Verdict | null = ran.stdout.trim().startsWith("{") ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null;
  return { ...ran, verdict };
}

const posts = (w: World) => w.standin.log.filter((r) => r.method === "POST").length;
const toolNames = (request: Record<string, unknown> | undefined): string[] =>
  ((request?.tools as { name: string }[] | undefined) ?? []).map((t) => t.name);

const writeThenDone = (project: string): Script => [
  { toolCall: { name: "Write", arguments: { file_path: join(project, "out.txt"), content: "written\n" } } },
  { text: "Done." },
];

describe("permissions: a refused Write says how to allow it", () => {
  test("default mode: completed, the file not written, stderr names --permission-mode acceptEdits", async () => {
    const w = world(writeThenDone);
    const { code, verdict, stderr } = await run(w, ["-"]);
    expect(code).toBe(0);
    expect(verdict?.status).toBe("completed");
    expect(verdict?.refused.map((r) => r.subject.split(":")[0])).toEqual(["Write"]);
    expect(existsSync(join(w.project, "out.txt"))).toBe(false);
    expect(stderr).toContain("refused permission: Write: out.txt — to allow it: --permission-mode acceptEdits");
  });

  test("--permission-mode acceptEdits: the file is written, nothing refused", async () => {
    const w = world(writeThenDone);
    const { code, verdict } = await run(w, ["--permission-mode", "acceptEdits", "-"]);
    expect(code).toBe(0);
    expect(verdict?.refused).toEqual([]);
    expect(readFileSync(join(w.project, "out.txt"), "utf8")).toBe("written\n");
  });

  test("--fail-on-refusal: the same refused run fails, exit 1", async () => {
    const w = world(writeThenDone);
    const { code, verdict } = await run(w, ["--fail-on-refusal", "-"]);
    expect(code).toBe(1);
    expect(verdict).toMatchObject({ status: "failed", ok: false });
    expect(verdict?.failure?.kind).toBe("refusals");
    expect(verdict?.failure?.message).toContain("--fail-on-refusal");
  });
});

describe("the model that ran", () => {
  test("observed_model: claude's system/init model, per phase, in show --json and sessions --json", async () => {
    const w = world(() => [{ text: "ok" }]);
    const { code, verdict } = await run(w, ["--model", "anthropic/claude-sonnet-4", "-"]);
    expect(code).toBe(0);
    const id = verdict?.session_id ?? "";
    const shown = JSON.parse((await spawnCollect([BIN, "show", id, "--json"], { cwd: w.project, env: w.env, timeoutMs: 30_000 })).stdout);
    expect(shown.model).toBe("anthropic/claude-sonnet-4");
    expect(shown.phases[0].observed_model).toBe(verdict?.summary.model ?? "?");
    expect(shown.phases[0].observed_model).toContain("claude-sonnet-4");
    const listed = JSON.parse(
      (await spawnCollect([BIN, "sessions", "--json"], { cwd: w.project, env: w.env, timeoutMs: 30_000 })).stdout.trim(),
    );
    expect(listed.phases[0].observed_model).toBe(shown.phases[0].observed_model);
  });
});

describe("limits", () => {
  const readForever =
    (project: string): Script =>
    () => ({ toolCall: { name: "Read", arguments: { file_path: join(project, "notes.txt") } } });

  test("--max-turns 1 against a model that calls Read forever: failed, the limit named", async () => {
    const w = world(readForever);
    const { code, verdict, stderr } = await run(w, ["--max-turns", "1", "--loop", "off", "-"]);
    expect(code).toBe(1);
    expect(verdict?.status).toBe("failed");
    expect(verdict?.failure?.kind).toBe("turn_limit");
    expect(verdict?.failure?.message).toContain("maximum number of turns (1)");
    expect(stderr).not.toContain("Read: notes.txt\n");
    expect(posts(w)).toBeLessThanOrEqual(2);
  });

  test("--max-cost: claude stops at --max-budget-usd, status over_budget, exit 4", async () => {
    const w = world(readForever);
    const { code, verdict } = await run(w, ["--max-cost", "0.000001", "--loop", "off", "-"]);
    expect(verdict?.status).toBe("over_budget");
    expect(code).toBe(4);
    // claude's own stop (error_max_budget_usd) or the supervisor's on the running cost: the same status.
    expect(["budget_limit", "stopped"]).toContain(verdict?.failure?.kind ?? "");
    expect(verdict?.failure?.message).toMatch(/maximum budget|passed --max-cost \$0\.000001/);
    expect(posts(w)).toBeLessThan(5);
  });
});

describe("the request: system prompt additions and pass-through", () => {
  test("--append-system-prompt (twice, one from a file) reaches the request's system prompt", async () => {
    const w = world(() => [{ text: "ok" }]);
    writeFileSync(join(w.project, "house-rules.md"), "Always answer in French.");
    const { code } = await run(w, ["--append-system-prompt", "Never touch vendor/.", "--append-system-prompt", "@house-rules.md", "-"]);
    expect(code).toBe(0);
    const system = JSON.stringify(w.standin.requests[0]?.system ?? "");
    expect(system).toContain("Never touch vendor/.");
    expect(system).toContain("Always answer in French.");
  });

  test("-- --disallowedTools=Read: Read is not offered; without it, it is", async () => {
    const w = world(() => [{ text: "ok" }]);
    expect((await run(w, ["-"])).code).toBe(0);
    expect(toolNames(w.standin.requests[0])).toContain("Read");
    const { code } = await run(w, ["-", "--", "--disallowedTools=Read"]);
    expect(code).toBe(0);
    expect(toolNames(w.standin.requests[1])).not.toContain("Read");
    expect(toolNames(w.standin.requests[1])).toContain("Bash");
  });

  test("a pass-through that breaks the contract is refused: one line, exit 2, nothing sent", async () => {
    const w = world(() => [{ text: "ok" }]);
    const { code, verdict, stderr } = await run(w, ["-", "--", "--output-format", "json"]);
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toEqual([
      "[error] -- --output-format: not passed to claude: agentport reads claude's stream-json output",
    ]);
    expect(verdict).toMatchObject({ status: "failed", ok: false, failure: { kind: "usage" }, summary: { preflight: true, exit_code: 2 } });
    expect(w.standin.log).toEqual([]);
  });

  test("unquoted words are one prompt, joined with single spaces", async () => {
    const w = world(() => [{ text: "ok" }]);
    const ran = await spawnCollect([BIN, "run", "--agent", "claude", "--json", "one", "two", "three"], {
      cwd: w.project,
      env: w.env,
      timeoutMs: 60_000,
    });
    expect(ran.code).toBe(0);
    expect(JSON.stringify(w.standin.requests[0]?.messages)).toContain("one two three");
  });

  test("--tools read,fly: exit 2 naming fly and the known tools, nothing sent", async () => {
    const w = world(() => [{ text: "ok" }]);
    const { code, stderr } = await run(w, ["--tools", "read,fly", "-"]);
    expect(code).toBe(2);
    expect(stderr).toContain('--tools: unknown tool "fly" for claude (known: read, bash');
    expect(stderr).toContain("WebFetch");
    expect(w.standin.log).toEqual([]);
  });
});
