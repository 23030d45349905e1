// --grace: the wrap-up message before the hard stop, through the compiled binary.
// With the fake `opencode serve` (which, like opencode, takes a prompt into a busy
// session and answers it at its next step): an agent that heeds the wrap-up
// finishes in the grace period (completed); one that does not is stopped at the
// timeout, the wrap-up said in both verdicts. An agent that takes no message
// while it runs (the one-shot CLIs, ACP; bon's turns) is refused before the start (exit 2),
// as is a grace with no timeout to come before.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { BIN, tempDir } from "./helpers.ts";
import { spawnCollect } from "./standins/util.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function world() {
  const root = tempDir("agentport-grace-");
  dirs.push(root);
  const project = join(root, "project");
  mkdirSync(project, { recursive: true });
  mkdirSync(join(root, "bin"));
  const fake = (agent: string) => {
    const path = join(root, "bin", `fake-${agent}`);
    symlinkSync(BIN, path);
    return path;
  };
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(root, "home"),
    AGENTPORT_HOME: join(root, "state"),
    AGENTPORT_CONFIG: "",
    NO_COLOR: "1",
  };
  return {
    project,
    env: { ...env, AGENTPORT_OPENCODE_BIN: fake("opencode"), AGENTPORT_PI_BIN: fake("pi"), AGENTPORT_CLAUDE_BIN: fake("claude") },
  };
}

async function run(argv: string[], scenario: unknown = "text") {
  const w = world();
  const ran = await spawnCollect([BIN, "run", "--json", "--progress", "off", ...argv, "-"], {
    cwd: w.project,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: typeof scenario === "string" ? scenario : JSON.stringify(scenario) },
    stdin: "Go",
    timeoutMs: 60_000,
  });
  const verdict = ran.stdout.trim().startsWith("{") ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null;
  return { ...ran, verdict };
}

// Work in one-second steps, as an agent's loop does: a message is taken between two.
const working = {
  steps: [{ text: "Working." }, ...Array.from({ length: 30 }, () => ({ sleep: 1000 })), { text: "Finished the long way." }, { done: true }],
};
const deaf = { steps: [{ text: "Working." }, { sleep: 60_000 }, { done: true }] };

describe("--grace with opencode --serve (the fake server)", () => {
  test("an agent that heeds the wrap-up finishes in the grace period: completed, exit 0, the wrap-up said", async () => {
    const started = performance.now();
    const { code, verdict, stderr } = await run(["--agent", "opencode", "--serve", "--timeout", "8", "--grace", "6"], working);
    expect({ code, status: verdict?.status, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, status: "completed", stderr: "" });
    expect(verdict?.text).toContain("Time is nearly up: finish now, save your work and report.");
    expect(verdict?.summary).toMatchObject({ wrap_up: "timeout", wrap_up_finished: true });
    expect(performance.now() - started).toBeLessThan(7_000);
  });

  test("an agent that does not heed it is stopped at the timeout: the wrap-up said, not finished (exit 4)", async () => {
    const { code, verdict } = await run(["--agent", "opencode", "--serve", "--timeout", "3", "--grace", "2"], deaf);
    expect(code).toBe(4);
    expect(verdict?.status).toBe("timeout");
    expect(verdict?.summary).toMatchObject({ wrap_up: "timeout", wrap_up_finished: false });
  });

  test("an enforced token budget that goes over: the budget's wrap-up, and its --budget-grace to finish in", async () => {
    const spending = { steps: [{ tool: { name: "shell", input: { command: "ls" }, result: "a.txt" } }, ...working.steps] };
    const { code, verdict } = await run(
      ["--agent", "opencode", "--serve", "--timeout", "60", "--grace", "5", "--max-tokens", "10", "--budget-grace", "20"],
      spending,
    );
    expect({ code, status: verdict?.status }).toEqual({ code: 0, status: "completed" });
    expect(verdict?.text).toContain("Your token budget is spent: finish now, save your work and report.");
    expect(verdict?.summary).toMatchObject({ wrap_up: "budget", wrap_up_finished: true });
  });

  test("without --grace no wrap-up is sent", async () => {
    const { verdict } = await run(["--agent", "opencode", "--serve", "--timeout", "2"], deaf);
    expect(verdict?.status).toBe("timeout");
    expect(verdict?.summary.wrap_up).toBeUndefined();
  });
});

describe("--grace refused before the start (exit 2, one line, nothing run)", () => {
  test.each([
    [["--agent", "claude"], "--grace: claude is run one-shot (its prompt read to the end of stdin): it takes no message while it runs"],
    [
      ["--agent", "opencode"],
      "--grace: opencode run is one-shot (its prompt read to the end of stdin) and takes no message while it runs; use --serve",
    ],
    [["--agent", "pi"], "--grace: pi is run one-shot (its prompt read to the end of stdin): it takes no message while it runs"],
  ])("%p", async (agent, line) => {
    const { code, verdict, stderr } = await run([...agent, "--timeout", "60", "--grace", "10"]);
    expect(code).toBe(2);
    expect(verdict).toMatchObject({ session_id: null, failure: { kind: "usage" } });
    expect(stderr).toContain(line);
    expect(stderr).not.toContain("    at ");
  });

  test("bon whose arms take no message (claude's, through run's path): refused as run refuses it (pi's RPC arms take it: bon-grace.test.ts)", async () => {
    const w = world();
    const ran = await spawnCollect([BIN, "bon", "spec.md", "--agent", "claude", "--timeout", "60", "--grace", "5"], {
      cwd: w.project,
      env: w.env,
      timeoutMs: 30_000,
    });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("claude is run one-shot");
  });

  test("a grace with no timeout, or not shorter than the timeout", async () => {
    const none = await run(["--agent", "opencode", "--serve", "--timeout", "0", "--grace", "10"]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--grace: there is no timeout to wrap up before");
    const long = await run(["--agent", "opencode", "--serve", "--timeout", "10", "--grace", "10"]);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain("--grace 10: must be shorter than the timeout (10 s)");
  });
});
