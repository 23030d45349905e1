// The fake codex and the fake gemini through the compiled binary: every
// scenario gives the verdict, exit code and ledger rows a real run of that
// shape gives (the e2e suites prove the same against the real CLIs).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";
import { waitGone } from "../src/io/proc.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function world(extra: Record<string, string> = {}): FakeProject {
  const w = fakeProject("agentport-fake-agents-", { GEMINI_CLI_TRUST_WORKSPACE: "true", ...extra });
  made.push(w.root);
  return w;
}

async function run(w: FakeProject, agent: string, scenario: string, extra: string[] = [], env: Record<string, string> = {}) {
  const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "off", ...extra, "go"], {
    cwd: w.proj,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: scenario, ...env },
  });
  const verdict: Verdict | null = ran.stdout.trim().startsWith("{") ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null;
  return { ...ran, verdict };
}

const REFUSED = { codex: "exec_command (execpolicy rule)", gemini: "run_shell_command (not offered)" } as const;

describe.each(["codex", "gemini"] as const)("the fake %s through the binary", (agent) => {
  test("text: completed, the text, tokens, cost null", async () => {
    const { code, verdict } = await run(world(), agent, "text");
    expect(code).toBe(0);
    expect(verdict).toMatchObject({
      agent,
      status: "completed",
      text: "Hello from the fake agent.",
      cost_micro_usd: null,
      tokens: { input: 1000, output: 7, cache_read: 200, cache_write: 0 },
    });
  });

  test("tool: two calls, one failed, a refused one named", async () => {
    const { code, verdict } = await run(world(), agent, "tool");
    expect(code).toBe(0);
    expect(verdict?.text).toBe("All done.");
    expect(verdict?.refused).toEqual([{ kind: "permission", subject: REFUSED[agent] }]);
  });

  test("error: an exhausted 500 is a failed run, a provider error (exit 1)", async () => {
    const { code, verdict } = await run(world(), agent, "error");
    expect(code).toBe(1);
    expect(verdict?.status).toBe("failed");
    expect(verdict?.fault?.kind).toBe("server_error");
  });

  test("auth: a 401 is the environment's (exit 5)", async () => {
    const { code, verdict } = await run(world(), agent, "auth");
    expect(code).toBe(5);
    expect(verdict?.fault?.kind).toBe("auth");
  });

  test("hang: the timeout ends the agent and its grandchild (exit 4)", async () => {
    const w = world();
    const pidFile = join(w.root, "grandchild.pid");
    const { code, verdict } = await run(w, agent, "hang", ["--timeout", "3"], { AGENTPORT_FAKE_PIDFILE: pidFile });
    expect(code).toBe(4);
    expect(verdict?.status).toBe("timeout");
    expect(existsSync(pidFile)).toBe(true);
    expect(await waitGone(Number(readFileSync(pidFile, "utf8")), 3_000)).toBe(true);
  });

  test("stall: silence for the stall time stops it (exit 4)", async () => {
    const { code, verdict } = await run(world(), agent, "stall", ["--stall", "2"]);
    expect(code).toBe(4);
    expect(verdict?.status).toBe("stalled");
  });

  test("crash: killed by a signal agentport did not send", async () => {
    const { code, verdict } = await run(world(), agent, "crash");
    expect(code).toBe(1);
    expect(verdict?.status).toBe("crashed");
    expect(verdict?.failure?.message).toContain("SIGKILL");
  });

  test("resume from another folder: refused, the fake never starts", async () => {
    const w = world();
    const first = await run(w, agent, "memory");
    const calls = () =>
      readFileSync(w.log, "utf8")
        .trim()
        .split("\n")
        .filter((l) => !l.includes("--version") && !l.includes("--help")).length;
    const before = calls();
    const other = await agentport(["resume", first.verdict?.session_id ?? "", "--cwd", w.root, "--json", "again"], {
      cwd: w.root,
      env: w.env,
    });
    expect(other.code).toBe(3);
    expect(calls()).toBe(before);
  });
});

describe("what only one of them does", () => {
  test("codex: waiting for the network until the stall is a network fault (exit 5)", async () => {
    const { code, verdict } = await run(world(), "codex", "no-network", ["--stall", "2"]);
    expect(code).toBe(5);
    expect(verdict?.fault?.kind).toBe("network");
  });

  test("codex: a resumed thread that is not a UUID is refused before codex runs (it would start a new thread)", async () => {
    const w = world();
    const first = await run(w, "codex", "memory");
    const id = first.verdict?.session_id ?? "";
    // A session whose thread codex never named (it died before thread.started): bound to a non-UUID by hand.
    const { Database } = await import("bun:sqlite");
    const db = new Database(join(w.root, "state", "ledger.sqlite"));
    db.query("UPDATE sessions SET agent_session_id = 'not-a-thread' WHERE id = ?").run(id);
    db.close();
    const again = await agentport(["resume", id, "--json", "again"], { cwd: w.proj, env: { ...w.env, AGENTPORT_FAKE_SCENARIO: "memory" } });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain("codex never named its thread");
  });

  test("gemini: the session is declared before the spawn, and gemini runs as one process (no relaunch)", async () => {
    const w = world();
    const { code } = await run(w, "gemini", "text", [], {
      AGENTPORT_FAKE_CHECK_LEDGER: join(w.root, "state", "ledger.sqlite"),
      AGENTPORT_FAKE_LOG_ENV: "GEMINI_CLI_NO_RELAUNCH",
    });
    expect(code).toBe(0);
    const call = readFileSync(w.log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((c) => c.argv.includes("--session-id"));
    expect(call?.env).toEqual({ GEMINI_CLI_NO_RELAUNCH: "true" });
    expect(call?.argv).toContain("-m");
  });

  test("gemini: a folder nobody trusts is refused by gemini (exit 55), and the failure says how to trust it", async () => {
    const w = world({ GEMINI_CLI_TRUST_WORKSPACE: "" });
    const { code, verdict } = await run(w, "gemini", "text");
    expect(code).toBe(1);
    expect(verdict?.failure?.message).toContain("exit 55");
    expect(verdict?.failure?.message).toContain("agentport.json");
  });

  test("gemini: a project config found but not trusted gives no --skip-trust; once `agentport trust`ed, it does", async () => {
    const w = world({ GEMINI_CLI_TRUST_WORKSPACE: "" });
    await Bun.write(join(w.proj, "agentport.json"), "{}\n");
    expect((await run(w, "gemini", "text")).code).toBe(1);
    const trusted = await agentport(["trust"], { cwd: w.proj, env: w.env });
    expect(trusted.code).toBe(0);
    expect((await run(w, "gemini", "text")).code).toBe(0);
    unlinkSync(join(w.proj, "agentport.json"));
  });

  test.each([
    // claude's value is joined with `=`, as its variadic flags are: it cannot swallow a prompt.
    ["claude", "acceptEdits", ["--permission-mode=acceptEdits"]],
    ["codex", "acceptEdits", ["--sandbox", "workspace-write"]],
    ["codex", "bypassPermissions", ["--sandbox", "danger-full-access"]],
    ["gemini", "bypassPermissions", ["--approval-mode", "yolo"]],
    ["gemini", "plan", ["--approval-mode", "plan"]],
  ] as const)("%s --permission-mode %s reaches the agent as %j", async (agent, mode, flags) => {
    const w = world();
    const { code } = await run(w, agent, "text", ["--permission-mode", mode]);
    expect(code).toBe(0);
    const call = readFileSync(w.log, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((c) => !c.argv.includes("--help") && !c.argv.includes("--version"));
    const at = call.argv.indexOf(flags[0]);
    expect(call.argv.slice(at, at + flags.length)).toEqual([...flags]);
  });

  test("pi has no permission modes: a usage error naming --tools, nothing started", async () => {
    const w = world();
    const ran = await agentport(["run", "--agent", "pi", "--permission-mode", "acceptEdits", "go"], { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("pi has no permission modes");
    expect(ran.stderr).toContain("with --tools");
  });

  test("an unknown permission mode is a usage error", async () => {
    const w = world();
    const ran = await agentport(["run", "--agent", "codex", "--permission-mode", "yolo", "go"], { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("--permission-mode must be one of default, acceptEdits, plan, bypassPermissions, dontAsk");
  });

  test("gemini: a tool child in a session of its own (as gemini's shell tool is) is killed with the run", async () => {
    const w = world();
    const pidFile = join(w.root, "grandchild.pid");
    const { code, verdict } = await run(w, "gemini", "hang-hard", ["--timeout", "3"], { AGENTPORT_FAKE_PIDFILE: pidFile });
    expect(code).toBe(4);
    expect(verdict?.status).toBe("timeout");
    expect(await waitGone(Number(readFileSync(pidFile, "utf8")), 3_000)).toBe(true);
  });
});

// Every agent's phase honours the run-folder flags, whatever its adapter.
describe("run folders for the agents with their own runners", () => {
  test.each(["codex", "gemini", "opencode"] as const)(
    "%s: --keep-stream off keeps no stream.jsonl, on (the default) keeps it",
    async (agent) => {
      const w = world();
      const streams = () =>
        (readdirSync(join(w.root, "state", "runs"), { recursive: true }) as string[]).filter((f) => f.endsWith("stream.jsonl")).length;
      expect((await run(w, agent, "text", ["--keep-stream", "off"])).code).toBe(0);
      expect(streams()).toBe(0);
      expect((await run(w, agent, "text")).code).toBe(0);
      expect(streams()).toBe(1);
    },
  );
});
