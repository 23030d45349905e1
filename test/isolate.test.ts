// `run --isolate`: the fake pi under real bwrap, through the compiled binary.
// A write into its folder lands; one to $HOME or /etc fails; a double-forked
// `setsid sleep` dies with the run; --network none cannot reach a loopback
// listener the test holds (the host network can); the verdict says isolated.
// Where bwrap cannot work, --isolate is one line and exit 5, never a run
// without it; `doctor` says whether isolation works here.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, BIN, fakeProject, sleepsWithMarker, type FakeProject } from "./helpers.ts";
import { bwrapWorks } from "./isolation.ts";
import { waitGone } from "../src/io/proc.ts";

const project = (): FakeProject => {
  const w = fakeProject("agentport-isolate-");
  // The fake's log is outside the sandbox's view: not kept.
  w.env.AGENTPORT_FAKE_LOG = "";
  return w;
};

const run = (w: FakeProject, steps: unknown[], flags: string[] = ["--isolate"]) =>
  agentport(["run", "--agent", "pi", "--json", "--progress", "off", ...flags, "go"], {
    cwd: w.proj,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps }) },
  });

const verdictOf = (stdout: string) => JSON.parse(stdout) as { status: string; isolated?: boolean };

const strays: number[] = [];

/** A fake step that leaves a double-forked `setsid sleep` behind, and its pids once it runs (up to 5 s). */
function leaveSleeper() {
  const marker = `1000.${process.pid}${Math.floor(Math.random() * 1e6)}`;
  return {
    step: { shell: `setsid sleep ${marker} </dev/null >/dev/null 2>&1 &` },
    started: async (): Promise<number[]> => {
      let seen: number[] = [];
      for (let i = 0; i < 250 && seen.length === 0; i++) {
        await Bun.sleep(20);
        seen = sleepsWithMarker(marker);
      }
      strays.push(...seen);
      return seen;
    },
  };
}
afterAll(() => {
  for (const pid of strays) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // Gone.
    }
  }
});

describe.if(bwrapWorks())("run --isolate under real bwrap", () => {
  test("a write in the folder lands; one to $HOME or /etc fails; the verdict says isolated", async () => {
    const w = project();
    const outside = join(w.env.HOME!, "escape");
    const ran = await run(w, [
      { writeFile: { path: "inside.txt", content: "in\n" } },
      { writeFile: { path: outside, content: "out\n" } },
      { writeFile: { path: "/etc/agentport-escape", content: "out\n" } },
      { text: "Tried." },
    ]);
    expect(ran.code).toBe(0);
    expect(verdictOf(ran.stdout)).toMatchObject({ status: "completed", isolated: true });
    expect(readFileSync(join(w.proj, "inside.txt"), "utf8")).toBe("in\n");
    expect(existsSync(outside)).toBe(false);
    expect(existsSync("/etc/agentport-escape")).toBe(false);
    // Without --isolate the same write lands (the test can fail), and the verdict says so.
    const open = await run(w, [{ writeFile: { path: outside, content: "out\n" } }, { text: "Tried." }], []);
    expect(verdictOf(open.stdout).isolated).toBe(false);
    expect(existsSync(outside)).toBe(true);
  }, 60_000);

  test("a double-forked setsid sleep ends with the run", async () => {
    const w = project();
    const sleeper = leaveSleeper();
    const running = run(w, [sleeper.step, { sleep: 1_000 }, { text: "Left a sleeper." }]);
    const seen = await sleeper.started();
    // It ran (the test could fail)…
    expect(seen).toHaveLength(1);
    const ran = await running;
    expect(ran.code).toBe(0);
    // …and it is gone with the run.
    expect(await waitGone(seen[0]!, 3_000)).toBe(true);
  }, 60_000);

  test("kill -9 of agentport mid-run: the sandbox and everything in it end with it (bwrap --die-with-parent, its PID namespace)", async () => {
    const w = project();
    const sleeper = leaveSleeper();
    const steps = [sleeper.step, { hang: true, ignoreTerm: true }];
    const proc = Bun.spawn([BIN, "run", "--agent", "pi", "--isolate", "--progress", "off", "go"], {
      cwd: w.proj,
      env: { ...process.env, ...w.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps }) },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    const seen = await sleeper.started();
    expect(seen).toHaveLength(1);
    proc.kill("SIGKILL");
    await proc.exited;
    expect(await waitGone(seen[0]!, 5_000)).toBe(true);
  }, 60_000);

  test("a named agent with isolate: true in a trusted agentport.json runs isolated; --no-isolate opts out", async () => {
    const w = project();
    writeFileSync(join(w.proj, "agentport.json"), JSON.stringify({ agents: { boxed: { agent: "pi", isolate: true, network: "none" } } }));
    expect(Bun.spawnSync([BIN, "trust", join(w.proj, "agentport.json")], { env: { ...process.env, ...w.env } }).exitCode).toBe(0);
    const outside = join(w.env.HOME!, "escape");
    const steps = [{ writeFile: { path: outside, content: "out\n" } }, { text: "Tried." }];
    const boxed = await run(w, steps, ["--as", "boxed"]);
    expect(verdictOf(boxed.stdout)).toMatchObject({ status: "completed", isolated: true });
    expect(existsSync(outside)).toBe(false);
    const open = await run(w, steps, ["--as", "boxed", "--no-isolate", "--network", "host"]);
    expect(open.code, open.stderr).toBe(0);
    expect(verdictOf(open.stdout).isolated).toBe(false);
    expect(existsSync(outside)).toBe(true);
  }, 60_000);

  test("resume --isolate continues a session in the sandbox", async () => {
    const w = project();
    const first = await run(w, [{ text: "First." }], []);
    const id = (JSON.parse(first.stdout) as { session_id: string }).session_id;
    const outside = join(w.env.HOME!, "escape");
    const scenario = JSON.stringify({ steps: [{ writeFile: { path: outside, content: "out\n" } }, { text: "Again." }] });
    const resumed = await agentport(["resume", id, "--isolate", "--json", "--progress", "off", "again"], {
      cwd: w.proj,
      env: { ...w.env, AGENTPORT_FAKE_SCENARIO: scenario },
    });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(verdictOf(resumed.stdout)).toMatchObject({ status: "completed", isolated: true });
    expect(existsSync(outside)).toBe(false);
  }, 60_000);

  test("--network none cannot reach a loopback listener; the host network can", async () => {
    let hits = 0;
    const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, new Response("hi")) });
    try {
      const url = `http://127.0.0.1:${server.port}/`;
      const w = project();
      const none = await run(w, [{ fetch: url }, { text: "Fetched." }], ["--isolate", "--network", "none"]);
      expect(none.code).toBe(0);
      expect(hits).toBe(0);
      const host = await run(w, [{ fetch: url }, { text: "Fetched." }], ["--isolate"]);
      expect(host.code).toBe(0);
      expect(hits).toBe(1);
    } finally {
      server.stop(true);
    }
  }, 60_000);

  test("isolated claude, codex, gemini and opencode default to bypassPermissions; a mode given wins", async () => {
    const w = project();
    const argvOf = async (agent: string, flags: string[]) => {
      const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "off", "--verbose", ...flags, "go"], {
        cwd: w.proj,
        env: { ...w.env, AGENTPORT_FAKE_SCENARIO: "text" },
      });
      return ran.stderr;
    };
    expect(await argvOf("claude", ["--isolate"])).toContain("--permission-mode=bypassPermissions");
    expect(await argvOf("claude", ["--isolate", "--permission-mode", "acceptEdits"])).toContain("--permission-mode=acceptEdits");
    expect(await argvOf("claude", [])).not.toContain("--permission-mode");
  }, 60_000);
});

describe("where isolation cannot work", () => {
  test("--isolate without bwrap: one line, exit 5, the agent never started", async () => {
    const w = project();
    const marker = join(w.root, "started");
    const ran = await agentport(["run", "--agent", "pi", "--isolate", "--progress", "off", "go"], {
      cwd: w.proj,
      env: {
        ...w.env,
        PATH: "/nonexistent",
        AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps: [{ writeFile: { path: marker, content: "x" } }, { text: "ran" }] }),
      },
    });
    expect(ran.code).toBe(5);
    expect(ran.stderr.trim().split("\n")).toHaveLength(1);
    expect(ran.stderr).toContain("--isolate: bwrap is not installed");
    expect(existsSync(marker)).toBe(false);
  });

  test("--network without --isolate is a usage error", async () => {
    const w = project();
    const ran = await run(w, [{ text: "x" }], ["--network", "none"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("--network none: only with --isolate");
  });

  test("doctor says whether isolation works here, and how to enable it (optional: never a failure of the box)", async () => {
    const w = project();
    type Check = { name: string; ok: boolean; detail: string; fix: string | null };
    const isolation = (stdout: string) => (JSON.parse(stdout).checks as Check[]).find((c) => c.name === "isolation");
    const here = await agentport(["doctor", "--json"], { cwd: w.proj, env: w.env });
    expect(isolation(here.stdout)).toMatchObject({ ok: true });
    expect(isolation(here.stdout)!.detail).toContain(bwrapWorks() ? "bwrap works" : "not available");
    const without = await agentport(["doctor", "--json"], { cwd: w.proj, env: { ...w.env, PATH: "/nonexistent" } });
    expect(isolation(without.stdout)!.detail).toContain("not available (bwrap is not installed)");
    expect(isolation(without.stdout)!.fix).toContain("bubblewrap");
  }, 60_000);
});
