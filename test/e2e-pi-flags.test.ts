// What a user of `pi --mode json` reaches for, through agentport, with the
// real pi 0.73.1 against the loopback OpenAI stand-in: --max-turns (enforced
// by agentport), --max-cost (the supervisor on the running cost),
// --append-system-prompt, pass-through, and what pi cannot take.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { BIN, ROOT } from "./helpers.ts";
import { piEnv, startOpenAIStandin, type Standin } from "./standins/openai.ts";
import type { Script } from "./standins/util.ts";
import { removeTempDirs, spawnCollect, tempDir } from "./standins/util.ts";

const PI = join(ROOT, "node_modules", ".bin", "pi");
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

function world(script: Script): World {
  const dir = tempDir("agentport-e2e-pi-flags-");
  const standin = startOpenAIStandin(script);
  standins.push(standin);
  const project = join(dir, "project");
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, "hello.txt"), "hi from hello.txt\n");
  return {
    dir,
    project,
    standin,
    env: { ...piEnv(dir, standin.url), AGENTPORT_HOME: join(dir, "agentport"), AGENTPORT_PI_BIN: PI, AGENTPORT_GATEWAY: "" },
  };
}

async function run(w: World, args: string[], stdin = "Read hello.txt") {
  const ran = await spawnCollect(
    [BIN, "run", "--agent", "pi", "--model", "standin/standin-model", "--json", "--progress", "lines", ...args],
    { cwd: w.project, env: w.env, stdin, timeoutMs: 60_000 },
  );
  const verdict: Verdict | null = ran.stdout.trim().startsWith("{") ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null;
  return { ...ran, verdict };
}

// A second per answer, as a model takes: with instant answers and read instant too, pi finished its second turn
// before the stop landed at load 15 (3 requests), the race the limit is not meant to measure.
const readForever: Script = () => ({ text: "Let me look.", toolCall: { name: "read", arguments: { path: "hello.txt" } }, delayMs: 1_000 });

describe("limits pi does not have, enforced by agentport", () => {
  test("--max-turns 1 against a model that calls read forever: failed after one turn, the limit named", async () => {
    const w = world(readForever);
    const { code, verdict } = await run(w, ["--max-turns", "1", "--loop", "off", "-"]);
    expect(verdict?.status).toBe("failed");
    expect(code).toBe(1);
    expect(verdict?.failure).toMatchObject({
      kind: "turn_limit",
      message: expect.stringContaining("turn limit: 1 assistant turn reached (--max-turns 1)"),
    });
    expect(verdict?.summary.stopped_by).toBe("turns");
    // The second request may have started before the stop; a third never.
    expect(w.standin.requests.length).toBeLessThanOrEqual(2);
  });

  test("--max-turns 3 with a model that answers on its second turn: completed", async () => {
    const w = world([{ toolCall: { name: "read", arguments: { path: "hello.txt" } } }, { text: "It says hi." }]);
    const { code, verdict } = await run(w, ["--max-turns", "3", "-"]);
    expect(code).toBe(0);
    expect(verdict?.text).toBe("It says hi.");
  });

  test("--max-cost: the supervisor stops the run on its running cost, status over_budget, exit 4", async () => {
    const w = world(() => ({ toolCall: { name: "read", arguments: { path: "hello.txt" } } }));
    const { code, verdict } = await run(w, ["--max-cost", "0.00001", "--loop", "off", "-"]);
    expect(verdict?.status).toBe("over_budget");
    expect(code).toBe(4);
    expect(verdict?.failure).toMatchObject({
      kind: "stopped",
      cause: "cost",
      message: expect.stringContaining("passed --max-cost $0.00001"),
    });
    expect(w.standin.requests.length).toBeLessThan(4);
  });
});

describe("resume: the request a session was born with", () => {
  test('run --direct --model standin/m, then resume ID "next" sends the same route, tools and pass-through (README\'s birth-folder example)', async () => {
    const w = world([{ text: "First." }, { text: "Second." }]);
    // The environment names a gateway: the birth request's --direct must still win on resume.
    w.env.AGENTPORT_GATEWAY = "openrouter";
    const first = await run(w, ["--direct", "--tools", "read", "-", "--", "--no-context-files"], "Add a test");
    expect(first.code).toBe(0);
    const id = first.verdict?.session_id ?? "";
    const shown = JSON.parse((await spawnCollect([BIN, "show", id, "--json"], { cwd: w.project, env: w.env, timeoutMs: 30_000 })).stdout);
    expect(JSON.parse(shown.request)).toMatchObject({
      model: "standin/standin-model",
      direct: true,
      tools: ["read"],
      route: "standin/standin-model",
      "pass-through": ["--no-context-files"],
    });
    expect(shown.phases[0].observed_model).toBe("standin/standin-model");

    const resumed = await spawnCollect([BIN, "resume", id.slice(0, 8), "Now", "the", "docs", "--json", "--verbose"], {
      cwd: w.project,
      env: w.env,
      timeoutMs: 60_000,
    });
    expect(resumed.code).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "completed", text: "Second.", session_id: id });
    expect(resumed.stderr).toContain("--model standin/standin-model --tools read");
    expect(resumed.stderr).toContain("--no-context-files");
    // The words were joined with single spaces.
    expect(JSON.stringify(w.standin.requests[1]?.messages)).toContain("Now the docs");
  });
});

describe("the request", () => {
  test("--append-system-prompt and a pass-through flag reach pi", async () => {
    const w = world([{ text: "ok" }]);
    const { code } = await run(w, ["--append-system-prompt", "Never touch vendor/.", "-", "--", "--no-context-files"]);
    expect(code).toBe(0);
    const system = JSON.stringify(((w.standin.requests[0]?.messages ?? []) as { role: string }[]).filter((m) => m.role === "system"));
    expect(system).toContain("Never touch vendor/.");
  });

  test("--permission-mode is a usage error for pi that points at --tools; --mode passed through is refused; nothing sent", async () => {
    const w = world([{ text: "ok" }]);
    const mode = await run(w, ["--permission-mode", "acceptEdits", "-"]);
    expect(mode.code).toBe(2);
    expect(mode.stderr).toContain(
      "--permission-mode: pi has no permission modes (it is Claude Code's flag); choose what pi may do with --tools",
    );
    const through = await run(w, ["-", "--", "--mode", "text"]);
    expect(through.code).toBe(2);
    expect(through.stderr).toContain("-- --mode: not passed to pi");
    const tools = await run(w, ["--tools", "read,fly", "-"]);
    expect(tools.code).toBe(2);
    expect(tools.stderr).toContain('unknown tool "fly" for pi');
    expect(w.standin.log).toEqual([]);
  });
});
