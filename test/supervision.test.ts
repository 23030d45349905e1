// Every status through the real driver, with the fake agents as real
// processes; and the supervisor's clocks with injected times.
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { Supervisor } from "../src/core/supervisor.ts";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { waitGone } from "../src/io/proc.ts";
import { agentport, BIN, tempDir } from "./helpers.ts";

let dir: string;
let claude: string;
beforeAll(() => {
  dir = tempDir();
  claude = join(dir, "fake-claude");
  symlinkSync(BIN, claude);
});

async function run(scenario: string, args: string[], env: Record<string, string> = {}) {
  const ran = await agentport(["run", "--claude-bin", claude, "--json", "--progress", "off", ...args, "go"], {
    cwd: dir,
    env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: scenario, ...env },
  });
  let verdict: Verdict;
  try {
    verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
  } catch {
    throw new Error(`no verdict (exit ${ran.code}): ${ran.stdout.slice(0, 200)} / ${ran.stderr.slice(0, 400)}`);
  }
  return { ...ran, verdict };
}

describe("statuses through the real driver", () => {
  test("stalled: no output for --stall S; the group is killed (exit 4)", async () => {
    const pidFile = join(dir, "stall.pid");
    const { code, verdict } = await run("stall", ["--stall", "0.5"], { AGENTPORT_FAKE_PIDFILE: pidFile });
    expect(code).toBe(4);
    expect(verdict.status).toBe("stalled");
    expect(verdict.failure?.message).toContain("no output from the agent for 0.5 s");
    expect(await waitGone(Number(readFileSync(pidFile, "utf8")), 3_000)).toBe(true);
  });

  test("timeout: the verdict says which clock expired", async () => {
    const { code, verdict } = await run("stall", ["--timeout", "0.5"]);
    expect(code).toBe(4);
    expect(verdict.status).toBe("timeout");
    expect(verdict.summary.timeout_clock).toBe("both");
  });

  test("over_budget: enforce stops the run after the grace, with the weighted figure (exit 4)", async () => {
    const { code, verdict, stderr } = await run("slow-tokens", ["--max-tokens", "150", "--budget", "enforce", "--budget-grace", "0"]);
    expect(code).toBe(4);
    expect(verdict.status).toBe("over_budget");
    expect(verdict.failure?.message).toContain("weighted tokens of 150");
    expect(verdict.summary.budget_weighted_tokens).toBeGreaterThan(150);
    expect(stderr).toContain("token budget exceeded");
  });

  test("budget warn: said once, the run completes", async () => {
    const { code, verdict, stderr } = await run("slow-tokens", ["--max-tokens", "150", "--budget", "warn"]);
    expect(code).toBe(0);
    expect(verdict.status).toBe("completed");
    expect(stderr.split("token budget exceeded").length - 1).toBe(1);
  });

  test("looping: the same tool call K times stops the run and names the tool, never its input", async () => {
    const { code, verdict, stdout, stderr } = await run("loop", ["--loop-repeat", "4"]);
    expect(code).toBe(4);
    expect(verdict.status).toBe("looping");
    expect(verdict.failure?.message).toBe("looping: the same Read call 4 times in a row");
    expect(verdict.summary.loop_tool).toBe("Read");
    expect(stdout + stderr).not.toContain("same.txt");
  });

  test("--loop off lets the same loop run to its end", async () => {
    const { code, verdict } = await run("loop", ["--loop", "off"]);
    expect(code).toBe(0);
    expect(verdict.text).toBe("never reached");
  });

  test("crashed: killed by a signal agentport did not send", async () => {
    const { code, verdict } = await run("self-kill", []);
    expect(code).toBe(1);
    expect(verdict.status).toBe("crashed");
    expect(verdict.failure?.message).toContain("killed by SIGKILL");
  });

  test("an environment fault: auth is exit 5 with its evidence", async () => {
    const { code, verdict } = await run("auth-error", []);
    expect(code).toBe(5);
    expect(verdict.env_fault).toBe(true);
    expect(verdict.fault?.kind).toBe("auth");
  });

  test("a provider 5xx is named but is no environment fault (exit 1)", async () => {
    const { code, verdict } = await run("api-error", []);
    expect(code).toBe(1);
    expect(verdict.env_fault).toBe(false);
    expect(verdict.fault?.kind).toBe("server_error");
  });

  test("a missing agent binary is an environment fault (exit 5)", async () => {
    const ran = await agentport(["run", "--claude-bin", join(dir, "nope"), "--json", "go"], { cwd: dir });
    expect(ran.code).toBe(5);
  });

  test("refused: a resume from another folder gives a refused verdict with --json (exit 3)", async () => {
    const first = await run("text", []);
    const other = join(dir, "other");
    mkdirSync(other, { recursive: true });
    const ran = await agentport(["resume", first.verdict.session_id ?? "", "--json", "--cwd", other, "again"], {
      cwd: dir,
      env: { AGENTPORT_HOME: join(dir, "home") },
    });
    expect(ran.code).toBe(3);
    const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
    expect(verdict.status).toBe("refused");
    expect(verdict.cost_micro_usd).toBe(0);
  });

  test("everything lands in the ledger: status, reason and details", async () => {
    const home = join(dir, "home-ledger");
    await agentport(["run", "--claude-bin", claude, "--json", "--loop-repeat", "3", "go"], {
      cwd: dir,
      env: { AGENTPORT_HOME: home, AGENTPORT_FAKE_SCENARIO: "loop" },
    });
    const db = new Database(join(home, "ledger.sqlite"), { readonly: true });
    const row = db.query<{ status: string; failure: string; details: string }, []>("SELECT status, failure, details FROM phases").get();
    db.close();
    expect(row?.status).toBe("looping");
    expect(row?.failure).toContain("the same Read call 3 times");
    expect(JSON.parse(row?.details ?? "{}")).toMatchObject({ loop_kind: "repeat", loop_tool: "Read", loop_count: 3 });
  });
});

describe("Supervisor clocks (injected)", () => {
  test("a timeout on the wall clock alone means the machine slept", () => {
    const s = new Supervisor({ timeoutMs: 1000, loopRepeat: null });
    s.start({ mono: 0, wall: 0 });
    expect(s.check({ mono: 500, wall: 500 })).toBeNull();
    expect(s.check({ mono: 600, wall: 5_000 })?.reason).toContain("on the wall clock only: the machine slept");
    expect(s.facts().timeout_clock).toBe("wall");
  });

  test("monotonic alone (the wall clock was set back)", () => {
    const s = new Supervisor({ timeoutMs: 1000, loopRepeat: null });
    s.start({ mono: 0, wall: 10_000 });
    expect(s.check({ mono: 1000, wall: 9_000 })?.kind).toBe("timeout");
    expect(s.facts().timeout_clock).toBe("monotonic");
  });

  test("a stall counts from the last activity; the first stop sticks", () => {
    const s = new Supervisor({ stallMs: 100, timeoutMs: 10_000, loopRepeat: null });
    s.start({ mono: 0, wall: 0 });
    s.activity({ mono: 90, wall: 90 });
    expect(s.check({ mono: 150, wall: 150 })).toBeNull();
    expect(s.check({ mono: 190, wall: 190 })?.kind).toBe("stall");
    expect(s.check({ mono: 20_000, wall: 20_000 })?.kind).toBe("stall");
  });
});
