// `--agent acp` through the compiled binary, driving the fake ACP agent
// (`agentport fake-acp`) as a real process: text, a tool and a plan, the
// permission bridge (rejected by default, allowed by the modes), reported
// cost, a hang cancelled over the protocol, a crash, a malformed message, a
// client method not offered, resume by session/load.
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { agentport, BIN, tempDir } from "./helpers.ts";
import { leftAfter, processesIn } from "./standins/world.ts";

let dir: string;
let fake: string;
beforeAll(() => {
  dir = tempDir("agentport-acp-");
  fake = join(dir, "fake-acp");
  symlinkSync(BIN, fake);
});

/** A run in a folder of its own; the verdict parsed. */
async function run(scenario: string, args: string[] = [], env: Record<string, string> = {}, cwd?: string) {
  const work = cwd ?? join(tempDir("agentport-acp-w-"));
  const log = join(work, ".fake.log");
  const started = performance.now();
  const ran = await agentport(["run", "--agent", "acp", "--acp-command", fake, "--json", "--progress", "off", ...args, "go"], {
    cwd: work,
    env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: scenario, AGENTPORT_FAKE_LOG: log, ...env },
  });
  const seconds = (performance.now() - started) / 1000;
  let verdict: Verdict;
  try {
    verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
  } catch {
    throw new Error(`no verdict (exit ${ran.code}): ${ran.stdout.slice(0, 200)} / ${ran.stderr.slice(0, 400)}`);
  }
  const received = existsSync(log)
    ? readFileSync(log, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l))
        .filter((r) => r.method !== undefined)
        .map((r) => r.method)
    : [];
  return { ...ran, verdict, work, received, seconds };
}

const runFolder = (sessionId: string) => {
  const runs = join(dir, "home", "runs");
  const name = readdirSync(runs).find((n) => n.endsWith(sessionId.slice(0, 8)))!;
  return join(runs, name);
};

describe("agentport run --agent acp (fake ACP agent)", () => {
  test("text: completed; the agent's name, version and capabilities on the phase; tokens reported, cost unknown (null, not 0)", async () => {
    const { code, verdict, received } = await run("text");
    expect(code).toBe(0);
    expect(verdict.status).toBe("completed");
    expect(verdict.text).toBe("Hello from the fake ACP agent.");
    expect(verdict.summary).toMatchObject({
      agent_name: "fake-acp",
      agent_version: "1.0.0",
      agent_capabilities: "loadSession,embeddedContext",
    });
    expect(verdict.cost_source).toBe("unknown");
    expect(verdict.tokens).toEqual({ input: 1200, output: 7, cache_read: 0, cache_write: 0 });
    expect(verdict.cost_micro_usd).toBeNull();
    expect(received.slice(0, 3)).toEqual(["initialize", "session/new", "session/prompt"]);
  });

  test("tool and plan: the tool call counted, the final text the last reply's", async () => {
    const { verdict } = await run("tool");
    expect(verdict.status).toBe("completed");
    expect(verdict.summary.tool_calls).toBe(1);
    expect(verdict.summary.plan_updates).toBe(1);
    expect(verdict.text).toBe("All done.");
  });

  test("permission: rejected by default, in refused with how to allow it, the file not made, the answer in the run folder", async () => {
    const { verdict, work } = await run("permission");
    expect(verdict.status).toBe("completed");
    expect(verdict.refused).toEqual([
      {
        kind: "permission",
        subject: "edit made-by-fake.txt: rejected; allow it with --permission-mode acceptEdits (or bypassPermissions)",
      },
    ]);
    expect(existsSync(join(work, "made-by-fake.txt"))).toBe(false);
    const answers = readFileSync(join(runFolder(verdict.session_id!), "acp-answers.jsonl"), "utf8");
    expect(JSON.parse(answers.trim())).toMatchObject({
      method: "session/request_permission",
      kind: "edit",
      path: "made-by-fake.txt",
      decision: "reject",
      outcome: { outcome: "selected", optionId: "cancel" },
    });
  });

  test("an agent that starts in a mode that asks nothing (claude-agent-acp's auto) is switched to the mode that asks: the policy holds", async () => {
    const { verdict, work, received } = await run("modes");
    expect(received.slice(0, 4)).toEqual(["initialize", "session/new", "session/set_mode", "session/prompt"]);
    expect(verdict.refused).toEqual([
      {
        kind: "permission",
        subject: "edit made-by-fake.txt: rejected; allow it with --permission-mode acceptEdits (or bypassPermissions)",
      },
    ]);
    expect(existsSync(join(work, "made-by-fake.txt"))).toBe(false);
    expect(verdict.summary.agent_mode).toBe("default");
  });

  test("modes follow --permission-mode: acceptEdits sets the agent's acceptEdits; bypassPermissions leaves the agent's own", async () => {
    const edits = await run("modes", ["--permission-mode", "acceptEdits"]);
    expect(edits.received).toContain("session/set_mode");
    expect(edits.verdict.summary.agent_mode).toBe("acceptEdits");
    expect(existsSync(join(edits.work, "made-by-fake.txt"))).toBe(true);
    const bypass = await run("modes", ["--permission-mode", "bypassPermissions"]);
    expect(bypass.received).not.toContain("session/set_mode");
    expect(bypass.verdict.summary.agent_mode).toBe("auto");
  });

  test("permission: --fail-on-refusal makes the rejected request a failure", async () => {
    const { code, verdict } = await run("permission", ["--fail-on-refusal"]);
    expect(code).toBe(1);
    expect(verdict.failure?.kind).toBe("refusals");
  });

  for (const mode of ["bypassPermissions", "acceptEdits"]) {
    test(`permission: --permission-mode ${mode} allows the edit; the file is made`, async () => {
      const { verdict, work } = await run("permission", ["--permission-mode", mode]);
      expect(verdict.status).toBe("completed");
      expect(verdict.refused).toEqual([]);
      expect(readFileSync(join(work, "made-by-fake.txt"), "utf8")).toContain("fake ACP agent");
    });
  }

  test("acceptEdits does not allow an execute request", async () => {
    const scenario = JSON.stringify({ steps: [{ permission: { kind: "execute", title: "touch x", path: "x" } }, { text: "ok" }] });
    const { verdict, work } = await run(scenario, ["--permission-mode", "acceptEdits"]);
    expect(verdict.refused[0]?.subject).toBe("execute x: rejected; allow it with --permission-mode bypassPermissions");
    expect(existsSync(join(work, "x"))).toBe(false);
  });

  test("usage: the cost the agent reports, and where it came from", async () => {
    const { verdict } = await run("usage");
    expect(verdict.cost_micro_usd).toBe(12_500);
    expect(verdict.cost_source).toBe("reported");
    expect(verdict.summary.context_used).toBe(5000);
  });

  test("hang: --timeout sends session/cancel first; the prompt comes back cancelled; status timeout (exit 4)", async () => {
    const { code, verdict, received, seconds } = await run("hang", ["--timeout", "1"]);
    expect(code).toBe(4);
    expect(verdict.status).toBe("timeout");
    expect(received).toContain("session/cancel");
    expect(verdict.stop_reason).toBe("cancelled");
    expect(verdict.summary.cancel_sent).toBe(true);
    expect(seconds).toBeLessThan(5);
  });

  test("hang-hard: an agent that ignores session/cancel is stopped after the cancel grace", async () => {
    const { code, verdict, received } = await run("hang-hard", ["--timeout", "1"]);
    expect(code).toBe(4);
    expect(verdict.status).toBe("timeout");
    expect(received).toContain("session/cancel");
    expect(verdict.stop_reason).toBeNull();
  });

  test("crash: killed by a signal agentport did not send", async () => {
    const { code, verdict } = await run("crash");
    expect(code).toBe(1);
    expect(verdict.status).toBe("crashed");
    expect(verdict.failure?.message).toContain("SIGKILL");
  });

  test("malformed: a line that is not JSON fails the run as a protocol violation", async () => {
    const { code, verdict } = await run("malformed");
    expect(code).toBe(1);
    expect(verdict.failure).toEqual({ kind: "protocol", message: "acp: protocol violation: a stdout line is not JSON" });
  });

  test("fs/read_text_file: not offered, so refused (method not found), whatever the path", async () => {
    const work = tempDir("agentport-acp-w-");
    writeFileSync(join(work, "notes.txt"), "line one\n");
    const { verdict } = await run(JSON.stringify({ steps: [{ read: "notes.txt" }] }), [], {}, work);
    expect(verdict.text).toBe("read refused: agentport does not serve fs/read_text_file");
    expect(verdict.summary.unknown_methods).toBe(1);
  });

  test("resume: session/load in the birth folder continues the session", async () => {
    const first = await run("memory");
    expect(first.verdict.status).toBe("completed");
    const again = await agentport(["resume", first.verdict.session_id!, "--json", "--progress", "off", "what was the word?"], {
      cwd: first.work,
      env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: "memory", AGENTPORT_FAKE_LOG: join(first.work, ".fake.log") },
    });
    const verdict = VerdictSchema.parse(JSON.parse(again.stdout));
    expect(verdict.text).toBe("The word was BLUE.");
    expect(readFileSync(join(first.work, ".fake.log"), "utf8")).toContain("session/load");
  });

  test("resume of a session born with --permission-mode acceptEdits: the loaded session is switched to it again; a mode given on resume wins", async () => {
    const first = await run("modes", ["--permission-mode", "acceptEdits"]);
    expect(first.verdict.summary.agent_mode).toBe("acceptEdits");
    const resume = async (extra: string[]) => {
      rmSync(join(first.work, "made-by-fake.txt"), { force: true });
      writeFileSync(join(first.work, ".fake.log"), "");
      const ran = await agentport(["resume", first.verdict.session_id!, "--json", "--progress", "off", ...extra, "again"], {
        cwd: first.work,
        env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: "modes", AGENTPORT_FAKE_LOG: join(first.work, ".fake.log") },
      });
      const methods = readFileSync(join(first.work, ".fake.log"), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => JSON.parse(l).method)
        .filter((m) => m !== undefined);
      return { verdict: VerdictSchema.parse(JSON.parse(ran.stdout)), methods, made: existsSync(join(first.work, "made-by-fake.txt")) };
    };
    const reused = await resume([]);
    expect(reused.methods.slice(0, 4)).toEqual(["initialize", "session/load", "session/set_mode", "session/prompt"]);
    expect([reused.verdict.summary.agent_mode, reused.made]).toEqual(["acceptEdits", true]);
    const overridden = await resume(["--permission-mode", "default"]);
    expect([overridden.verdict.summary.agent_mode, overridden.made, overridden.verdict.refused.length]).toEqual(["default", false, 1]);
  });

  test("resume: an agent without loadSession is refused in one line", async () => {
    const first = await run("no-load");
    const again = await agentport(["resume", first.verdict.session_id!, "--json", "--progress", "off", "more"], {
      cwd: first.work,
      env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: "no-load" },
    });
    const verdict = VerdictSchema.parse(JSON.parse(again.stdout));
    expect(verdict.failure).toEqual({
      kind: "refused",
      message: "acp: fake-acp does not advertise loadSession: its sessions cannot be resumed; start a new one with agentport run",
    });
  });

  test("kill -9 of agentport mid-prompt: the keeper ends the ACP agent, nothing is left", async () => {
    const work = tempDir("agentport-acp-w-");
    const log = join(work, ".fake.log");
    const proc = Bun.spawn([BIN, "run", "--agent", "acp", "--acp-command", fake, "--json", "--progress", "off", "go"], {
      cwd: work,
      env: { ...process.env, AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: "hang", AGENTPORT_FAKE_LOG: log },
      stdout: "ignore",
      stderr: "ignore",
    });
    for (let i = 0; i < 200 && !(existsSync(log) && readFileSync(log, "utf8").includes("session/prompt")); i++) await Bun.sleep(50);
    expect(processesIn(work).length).toBeGreaterThan(0);
    proc.kill("SIGKILL");
    await proc.exited;
    expect(await leftAfter(work, 5_000)).toEqual([]);
  });

  test("--agent acp without --acp-command: one line, exit 2", async () => {
    const ran = await agentport(["run", "--agent", "acp", "go"], { cwd: dir, env: { AGENTPORT_HOME: join(dir, "home") } });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("--agent acp needs the ACP agent's command: --acp-command 'gemini --acp'");
    expect(ran.stderr).not.toContain("    at ");
  });
});
