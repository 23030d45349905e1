// `agentport run --agent claude` against the fake claude, as real processes:
// the compiled binary runs itself (through a symlink) as the agent.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { waitGone } from "../src/io/proc.ts";
import { agentport, BIN, tempDir, type Ran } from "./helpers.ts";

let dir: string;
let fake: string;

beforeAll(() => {
  dir = tempDir();
  fake = join(dir, "fake-claude");
  symlinkSync(BIN, fake);
});

async function run(scenario: string, args: string[] = [], env: Record<string, string> = {}): Promise<Ran & { verdict: Verdict }> {
  const ran = await agentport(["run", "--agent", "claude", "--claude-bin", fake, "--json", "--progress", "lines", ...args, "do it"], {
    cwd: dir,
    env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: scenario, ...env },
  });
  let verdict: Verdict;
  try {
    verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
  } catch {
    throw new Error(`no verdict on stdout (exit ${ran.code}): ${ran.stdout.slice(0, 300)} / ${ran.stderr.slice(0, 500)}`);
  }
  return { ...ran, verdict };
}

describe("run --agent claude against the fake claude", () => {
  test("a stream that names another session keeps agentport's id, records the agent's, and warns once", async () => {
    const other = "11111111-2222-4333-8444-555555555555";
    const result = {
      type: "result",
      subtype: "success",
      is_error: false,
      result: "Done.",
      session_id: other,
      total_cost_usd: 0.001,
      usage: { input_tokens: 1, output_tokens: 1 },
    };
    const scenario = {
      steps: [
        { text: "Done." },
        { raw: JSON.stringify({ type: "system", subtype: "status", session_id: other }) },
        { raw: JSON.stringify(result) },
        { exit: 0 },
      ],
    };
    const { code, verdict, stderr } = await run(JSON.stringify(scenario));
    expect(code).toBe(0);
    expect(verdict.session_id).not.toBe(other);
    expect(verdict.summary.agent_session_id).toBe(other);
    const runs = readdirSync(join(dir, "home", "runs"));
    expect(runs.some((name) => name.includes(verdict.session_id!.slice(0, 8)))).toBe(true);
    expect(stderr.split("\n").filter((l) => l.includes(other))).toHaveLength(1);
    const shown = await agentport(["show", "--json", verdict.session_id!], { cwd: dir, env: { AGENTPORT_HOME: join(dir, "home") } });
    expect(shown.code).toBe(0);
  });

  test("text: the final text, cost, tokens, session id chosen by agentport", async () => {
    const { code, verdict, stderr } = await run("text");
    expect(code).toBe(0);
    expect(verdict).toMatchObject({
      agent: "claude",
      status: "completed",
      ok: true,
      text: "Hello from the fake claude.",
      cost_micro_usd: 12300,
      failure: null,
    });
    expect(verdict.tokens).toEqual({ input: 3000, output: 42, cache_read: 200, cache_write: 10 });
    expect(verdict.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(stderr).toContain("claude: started (claude-fake-1)");
  });

  test("without --json stdout carries only the final text", async () => {
    const ran = await agentport(["run", "--claude-bin", fake, "--progress", "lines", "hi"], {
      cwd: dir,
      env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: "text" },
    });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toBe("Hello from the fake claude.\n");
  });

  test("the prompt reaches the agent on stdin, also when it starts with a dash", async () => {
    const ran = await agentport(["run", "--claude-bin", fake, "--json", "-"], {
      cwd: dir,
      stdin: "--not-a-flag please",
      env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: '{"steps":[{"result":{"text":"ok"}}]}' },
    });
    expect(ran.code).toBe(0);
  });

  test("an empty answer with no tool call fails (empty_answer); with a tool call it completes and says so", async () => {
    const env = (scenario: string) => ({ AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: scenario });
    const empty = await agentport(["run", "--claude-bin", fake, "--json", "go"], {
      cwd: dir,
      env: env('{"steps":[{"result":{"text":"  "}}]}'),
    });
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.stdout)).toMatchObject({ status: "failed", ok: false, failure: { kind: "empty_answer" } });
    const tools = await agentport(["run", "--claude-bin", fake, "--json", "go"], {
      cwd: dir,
      env: env('{"steps":[{"tool":{"name":"Read","input":{"file_path":"a"}}},{"result":{"text":""}}]}'),
    });
    expect(tools.code).toBe(0);
    expect(JSON.parse(tools.stdout)).toMatchObject({ status: "completed", ok: true, summary: { empty_answer: true } });
  });

  test("tools: progress names tools with their allow-listed input; no command line leaks", async () => {
    const { code, verdict, stderr, stdout } = await run("tools");
    expect(code).toBe(0);
    expect(stderr).toContain("claude: tool Read notes.txt");
    expect(stderr).toContain("claude: tool Bash Print a greeting");
    expect(stderr).toContain("claude: tool Read failed");
    for (const out of [stderr, stdout]) expect(out).not.toContain("hunter2");
    expect(verdict.summary).toMatchObject({ tool_calls: 3, tool_errors: 1 });
  });

  test("retry then success: provider retry progress", async () => {
    const { code, stderr } = await run("retry");
    expect(code).toBe(0);
    expect(stderr).toContain("claude: provider retry (attempt 1 of 10)");
  });

  test.each([
    ["api-error", 1, "api_error_status 500"],
    ["error-max-turns", 1, "Reached maximum number of turns (2)"],
    ["error-during-execution", 1, "No conversation found"],
    ["auth-error", 5, "api_error_status 401"],
    ["invalid-utf8", 1, "a line is not valid UTF-8"],
    ["unterminated", 1, "the last line has no LF"],
    ["oversize-result", 1, "past the per-line bound were skipped"],
  ])("%s fails with exit %i naming the reason", async (scenario, exit, reason) => {
    const { code, verdict } = await run(scenario, scenario === "oversize-result" ? ["--max-line-bytes", "1024"] : []);
    expect(code).toBe(exit);
    expect(verdict.status).toBe("failed");
    expect(verdict.ok).toBe(false);
    expect(verdict.failure?.message).toContain(reason);
  });

  test("error-max-budget (claude stopped itself at --max-budget-usd) is over_budget, exit 4, naming the reason", async () => {
    const { code, verdict } = await run("error-max-budget");
    expect(code).toBe(4);
    expect(verdict).toMatchObject({ status: "over_budget", ok: false });
    expect(verdict.failure).toMatchObject({ kind: "budget_limit", message: expect.stringContaining("Reached maximum budget ($0.03)") });
  });

  test("permission denials are recorded as refused; the run still completes", async () => {
    const { code, verdict } = await run("denials");
    expect(code).toBe(0);
    expect(verdict.refused).toEqual([{ kind: "permission", subject: "Bash: Create an empty file" }]);
  });

  test("an oversize tool result line is skipped and counted", async () => {
    const { code, verdict } = await run("oversize", ["--max-line-bytes", String(1024 * 1024)]);
    expect(code).toBe(0);
    expect(verdict.summary.oversize_records).toBe(1);
    expect(verdict.text).toBe("Read it.");
  });

  test("U+2028 inside a string does not split the line", async () => {
    const { code, verdict } = await run("u2028");
    expect(code).toBe(0);
    expect(verdict.text).toBe("one\u2028two\u2029three");
  });

  test("crash before result: failed, with the exit code and the ANSI-stripped stderr tail", async () => {
    const { code, verdict } = await run("crash");
    expect(code).toBe(1);
    expect(verdict.failure?.message).toContain("exited without a result event (exit code 1)");
    expect(verdict.failure?.message).toContain("Error: something broke");
    expect(verdict.failure?.message).not.toContain("\u001b");
  });

  test("hang: killed at the timeout with its whole process group", async () => {
    const pidFile = join(dir, "grandchild.pid");
    const { code, verdict } = await run("hang", ["--timeout", "1"], { AGENTPORT_FAKE_PIDFILE: pidFile });
    expect(code).toBe(4);
    expect(verdict.status).toBe("timeout");
    const grandchild = Number(readFileSync(pidFile, "utf8"));
    expect(grandchild).toBeGreaterThan(0);
    expect(await waitGone(grandchild, 3_000)).toBe(true);
  });

  test("a child that ignores TERM is KILLed after the grace", async () => {
    const { code, verdict } = await run("hang-hard", ["--timeout", "1"]);
    expect(code).toBe(4);
    expect(verdict.summary.signal).toBe("SIGKILL");
  });

  test("Ctrl-C of agentport kills the agent's group and exits 130", async () => {
    const pidFile = join(dir, "grandchild-int.pid");
    const proc = Bun.spawn([BIN, "run", "--claude-bin", fake, "--json", "hi"], {
      cwd: dir,
      env: { ...process.env, AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: "hang", AGENTPORT_FAKE_PIDFILE: pidFile },
      stdout: "pipe",
      stderr: "pipe",
    });
    // Wait until the fake has started its grandchild, then interrupt.
    for (let i = 0; i < 200 && !(await Bun.file(pidFile).exists()); i++) await Bun.sleep(25);
    proc.kill("SIGINT");
    const code = await proc.exited;
    const verdict = VerdictSchema.parse(JSON.parse(await new Response(proc.stdout).text()));
    expect(code).toBe(130);
    expect(verdict.status).toBe("aborted");
    expect(await waitGone(Number(readFileSync(pidFile, "utf8")), 3_000)).toBe(true);
  });

  test("--progress json gives one JSON event per line on stderr", async () => {
    const { stderr } = await run("tools", ["--progress", "json"]);
    const events = stderr
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(events.length).toBeGreaterThan(5);
    const read = events.find((e) => e.kind === "tool_started" && e.tool === "Read");
    expect(read).toMatchObject({ agent: "claude", kind: "tool_started", tool: "Read", detail: "notes.txt" });
    expect(typeof read.session_id).toBe("string");
  });

  test("alive after its result: the verdict is kept and the process is ended", async () => {
    const { code, verdict } = await run("linger", ["--linger", "0.3"]);
    expect(code).toBe(0);
    expect(verdict.ok).toBe(true);
    expect(verdict.summary.stopped_by).toBe("linger");
  });

  test("stderr goes to a file in the run's folder", async () => {
    const home = join(dir, "home-stderr");
    await agentport(["run", "--claude-bin", fake, "--home", home, "hi"], { cwd: dir, env: { AGENTPORT_FAKE_SCENARIO: "crash" } });
    const runs = readdirSync(join(home, "runs"));
    expect(runs.length).toBe(1);
    expect(readFileSync(join(home, "runs", runs[0] as string, "stderr.log"), "utf8")).toContain("something broke");
  });
});

describe("run: errors before any process starts", () => {
  test("with --json every pre-flight exit is still one verdict-shaped object", async () => {
    for (const [args, code, status, kind] of [
      [["run", "--json", "--claude-bin", join(dir, "nope"), "x"], 5, "failed", "environment"],
      [["run", "--json", "--tools", "read,fly", "x"], 2, "failed", "usage"],
      [["run", "--json", "--timout", "3", "x"], 2, "failed", "usage"],
      [["resume", "--json", "0193a1b2", "x"], 2, "failed", "usage"],
    ] as [string[], number, string, string][]) {
      const ran = await agentport(args, { cwd: dir, env: { AGENTPORT_CLAUDE_BIN: fake, AGENTPORT_HOME: join(dir, "preflight-home") } });
      expect(ran.code).toBe(code);
      expect(ran.stdout.trim().split("\n")).toHaveLength(1);
      const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
      expect(verdict).toMatchObject({
        status,
        ok: false,
        env_fault: code === 5,
        failure: { kind },
        summary: { preflight: true, exit_code: code },
      });
    }
  });

  test("a missing claude binary is one line and exit 5", async () => {
    const ran = await agentport(["run", "--claude-bin", join(dir, "nope"), "hi"], { cwd: dir });
    expect(ran.code).toBe(5);
    expect(ran.stderr.trim().split("\n").length).toBe(1);
    expect(ran.stderr).toContain("does not exist or is not executable");
    expect(ran.stdout).toBe("");
  });

  test("claude not on PATH is exit 5", async () => {
    const ran = await agentport(["run", "hi"], { cwd: dir, env: { PATH: "/nonexistent", AGENTPORT_CLAUDE_BIN: "" } });
    expect(ran.code).toBe(5);
    expect(ran.stderr).toContain("not found on PATH");
  });

  test.each([
    [["run", "--timout", "3", "hi"], "unknown option --timout"],
    [["run", "--timeout", "soon", "hi"], "--timeout must be a number of seconds (0 for none)"],
    [["run", "--max-line-bytes", "0", "hi"], "--max-line-bytes must be a positive integer"],
    [["run", "--agent", "gpt", "hi"], "Invalid value for argument"],
    [["run", "--cwd", "/nonexistent/x", "hi"], "no such folder"],
    [["run", "   "], "the prompt is empty"],
    [["frobnicate"], 'unknown command "frobnicate"'],
    [["replay", "/nonexistent.jsonl"], "no such file"],
  ])("%j is a usage error (exit 2)", async (args, message) => {
    const ran = await agentport(args as string[], { cwd: dir, env: { AGENTPORT_CLAUDE_BIN: fake } });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(message);
    expect(ran.stdout).toBe("");
  });
});

describe("the CLI surface", () => {
  test("--version prints the package version", async () => {
    const ran = await agentport(["--version"]);
    const pkg = await Bun.file(join(import.meta.dir, "..", "package.json")).json();
    expect(ran.stdout.trim()).toBe(pkg.version);
    expect(ran.code).toBe(0);
  });

  test.each(["run", "replay", "selftest"])("%s --help teaches with an example", async (cmd) => {
    const ran = await agentport([cmd, "--help"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain("USAGE");
    expect(ran.stdout).toContain("EXAMPLES");
    expect(ran.stdout).toContain(`agentport ${cmd}`);
  });

  test("--help lists the exit codes", async () => {
    const ran = await agentport(["--help"]);
    expect(ran.stdout).toContain("EXIT CODES");
    expect(ran.stdout).toMatch(/^\s*130\s+interrupted/m);
    expect(ran.stdout).toMatch(/^\s*75\s+parked/m);
  });

  test("selftest passes through the compiled binary", async () => {
    const ran = await agentport(["selftest"]);
    if (ran.code !== 0) console.error(ran.stdout, ran.stderr);
    expect(ran.code).toBe(0);
    expect(ran.stdout).not.toContain("FAIL");
    expect(ran.stdout.trim().split("\n").length).toBeGreaterThanOrEqual(6);
  });

  test("selftest --json: one object {ok, checks: [{name, ok, ms, error}], ms}", async () => {
    const ran = await agentport(["selftest", "--json"]);
    expect(ran.code).toBe(0);
    expect(ran.stdout.trim().split("\n")).toHaveLength(1);
    const report = JSON.parse(ran.stdout);
    expect(report).toMatchObject({ ok: true, ms: expect.any(Number) });
    expect(report.checks.length).toBeGreaterThanOrEqual(6);
    for (const c of report.checks) expect(Object.keys(c)).toEqual(["name", "ok", "ms", "error"]);
  });
});
