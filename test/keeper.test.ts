// Agents die with agentport: a `kill -9` of agentport takes the agent, its
// children and a grandchild that made a session of its own with it (the
// keeper), and the next command finishes the phase as interrupted.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { hostname } from "node:os";
import type { PhaseRow } from "../src/io/ledger.ts";
import { agentport, BIN, fakeProject, type FakeProject } from "./helpers.ts";
import { bwrapWorks } from "./isolation.ts";

/** Every live process whose environment carries `mark`: the run's, wherever they regrouped. */
function marked(mark: string): number[] {
  const needle = `KEEPER_TEST_MARK=${mark}\0`;
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (/\) [ZX] /.test(stat)) continue;
      if (readFileSync(`/proc/${pid}/environ`, "latin1").includes(needle)) found.push(pid);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

/** Every phase in the project's ledger, read as it is on disk. */
function phases(p: FakeProject): PhaseRow[] {
  const db = new Database(join(p.env.AGENTPORT_HOME!, "ledger.sqlite"), { readonly: true });
  try {
    return db.query<PhaseRow, []>(`SELECT * FROM phases ORDER BY id`).all();
  } finally {
    db.close();
  }
}

async function until(what: string, ms: number, check: () => boolean): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await Bun.sleep(25);
  }
}

/** A hanging agent with a grandchild in a session of its own, under a running agentport. */
function startHanging(p: FakeProject, mark: string, pidFile: string, ownGroup = false, flags: string[] = []): Bun.Subprocess {
  const scenario = JSON.stringify({ steps: [{ text: "working" }, { grandchild: pidFile, ownGroup: true }, { hang: true }] });
  return Bun.spawn([BIN, "run", "--agent", "claude", "--progress", "off", ...flags, "hang"], {
    cwd: p.proj,
    env: { ...process.env, ...p.env, NO_COLOR: "1", AGENTPORT_FAKE_SCENARIO: scenario, KEEPER_TEST_MARK: mark },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
    detached: ownGroup,
  });
}

describe("kill -9 of agentport", () => {
  test("no process of the run is left within 5 s, the grandchild in its own session included", async () => {
    const p = fakeProject("agentport-keeper-");
    const mark = crypto.randomUUID();
    const pidFile = join(p.root, "grandchild.pid");
    const runner = startHanging(p, mark, pidFile);
    try {
      await until("the grandchild started", 20_000, () => existsSync(pidFile) && readFileSync(pidFile, "utf8").length > 0);
      const grandchild = Number(readFileSync(pidFile, "utf8"));
      const before = marked(mark);
      expect(before).toContain(runner.pid);
      expect(before).toContain(grandchild);
      // The ledger says who runs the phase, and where its agent's group is.
      const [running] = phases(p);
      expect(running).toMatchObject({ ended_at: null, runner_pid: runner.pid, runner_host: hostname() });
      expect(before).toContain(running!.agent_pgid!);
      // One agent per session at a time: its resume is refused, naming the pids.
      const resumed = await agentport(["resume", running!.session_id, "again"], { cwd: p.proj, env: p.env });
      expect(resumed.code).toBe(3);
      expect(resumed.stderr).toContain(`is still running (agentport pid ${runner.pid}`);
      expect(resumed.stderr).toContain(`its agent pid ${running!.agent_pgid}`);

      process.kill(runner.pid, "SIGKILL");
      await runner.exited;
      await until(`the run's processes are gone (left: ${marked(mark).join(", ")})`, 5_000, () => marked(mark).length === 0);

      // The next command that opens the ledger finishes the phase as interrupted, saying when it noticed.
      const listed = await agentport(["sessions", "--json"], { cwd: p.proj, env: p.env });
      expect(listed.code).toBe(0);
      const [phase] = (JSON.parse(listed.stdout) as { phases: PhaseRow[] }).phases;
      expect(phase).toMatchObject({ status: "interrupted", ok: false, runner_pid: runner.pid, agent_pgid: running!.agent_pgid });
      expect(phase!.failure).toContain(`agentport (pid ${runner.pid}) was gone before the phase finished; noticed`);
      expect(Date.parse(String(phase!.details?.interrupted_noticed_at))).toBeGreaterThan(Date.parse(phase!.started_at));
      // And the session can be resumed again.
      const again = await agentport(["resume", running!.session_id, "again"], {
        cwd: p.proj,
        env: { ...p.env, AGENTPORT_FAKE_SCENARIO: "text" },
      });
      expect(again.code).toBe(0);
    } finally {
      for (const pid of marked(mark)) process.kill(pid, "SIGKILL");
    }
  });

  test("a double-forked setsid daemon (handed to agentport, no one's descendant) is gone too after a kill -9 of agentport", async () => {
    const p = fakeProject("agentport-keeper-");
    const mark = crypto.randomUUID();
    const pidFile = join(p.root, "daemon.pid");
    const daemon = `setsid sh -c 'echo $$ > ${pidFile}; exec sleep 600' </dev/null >/dev/null 2>&1 &`;
    const scenario = JSON.stringify({ steps: [{ tool: { name: "Bash", input: { command: "serve" }, run: daemon } }, { hang: true }] });
    const runner = Bun.spawn([BIN, "run", "--agent", "claude", "--progress", "off", "hang"], {
      cwd: p.proj,
      env: { ...process.env, ...p.env, NO_COLOR: "1", AGENTPORT_FAKE_SCENARIO: scenario, KEEPER_TEST_MARK: mark },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    try {
      await until("the daemon started", 20_000, () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim().length > 0);
      const pid = Number(readFileSync(pidFile, "utf8"));
      // Its shell exited: the daemon is agentport's now (the child subreaper), in a session of its own.
      await until(
        "the daemon was handed to agentport",
        5_000,
        () => readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1] === String(runner.pid),
      );
      expect(marked(mark)).toContain(pid);
      process.kill(runner.pid, "SIGKILL");
      await runner.exited;
      await until(`the run's processes are gone (left: ${marked(mark).join(", ")})`, 5_000, () => marked(mark).length === 0);
    } finally {
      for (const pid of marked(mark)) process.kill(pid, "SIGKILL");
    }
  });

  test("the run folder a kill -9 leaves holds whole records: what the agent wrote before, each line JSON, and replay reads it", async () => {
    const p = fakeProject("agentport-keeper-");
    const mark = crypto.randomUUID();
    const pidFile = join(p.root, "grandchild.pid");
    const runner = startHanging(p, mark, pidFile);
    try {
      await until("the grandchild started", 20_000, () => existsSync(pidFile) && readFileSync(pidFile, "utf8").length > 0);
      const runs = join(p.env.AGENTPORT_HOME!, "runs");
      const [folder] = readdirSync(runs);
      const stream = join(runs, folder!, "stream.jsonl");
      // Written per read of the agent's stdout: its first records are out while it hangs.
      await until("the agent's text is recorded", 10_000, () => existsSync(stream) && readFileSync(stream, "utf8").includes("working"));
      process.kill(runner.pid, "SIGKILL");
      await runner.exited;
      for (const name of ["stream.jsonl", "progress.ndjson"]) {
        const lines = readFileSync(join(runs, folder!, name), "utf8").split("\n");
        expect(lines.at(-1)).toBe(""); // ends with a whole line
        for (const line of lines.slice(0, -1)) expect(() => JSON.parse(line)).not.toThrow();
      }
      const replayed = await agentport(["replay", "--agent", "claude", stream, "--json"], { cwd: p.proj, env: p.env });
      expect(replayed.code).toBe(1);
      expect(JSON.parse(replayed.stdout)).toMatchObject({ status: "failed", failure: { kind: "no_result" } });
    } finally {
      for (const pid of marked(mark)) process.kill(pid, "SIGKILL");
    }
  });

  test("after a normal run the keeper is gone too: keepers never pile up", async () => {
    const p = fakeProject("agentport-keeper-");
    const mark = crypto.randomUUID();
    const ran = await agentport(["run", "--agent", "claude", "--progress", "off", "hi"], {
      cwd: p.proj,
      env: { ...p.env, AGENTPORT_FAKE_SCENARIO: "text", KEEPER_TEST_MARK: mark },
    });
    expect(ran.code).toBe(0);
    try {
      await until(`the keeper exited (left: ${marked(mark).join(", ")})`, 5_000, () => marked(mark).length === 0);
    } finally {
      for (const pid of marked(mark)) process.kill(pid, "SIGKILL");
    }
  });

  test("kill -9 of agentport's whole process group (a CI runner's timeout) ends the agent too", async () => {
    const p = fakeProject("agentport-keeper-");
    const mark = crypto.randomUUID();
    const pidFile = join(p.root, "grandchild.pid");
    const runner = startHanging(p, mark, pidFile, true);
    try {
      await until("the grandchild started", 20_000, () => existsSync(pidFile) && readFileSync(pidFile, "utf8").length > 0);
      process.kill(-runner.pid, "SIGKILL");
      await runner.exited;
      await until(`the run's processes are gone (left: ${marked(mark).join(", ")})`, 5_000, () => marked(mark).length === 0);
    } finally {
      for (const pid of marked(mark)) process.kill(pid, "SIGKILL");
    }
  });

  test("agentport and its keeper both killed: the phase is interrupted, and a resume is refused while the orphaned agent lives", async () => {
    const p = fakeProject("agentport-keeper-");
    const mark = crypto.randomUUID();
    const pidFile = join(p.root, "grandchild.pid");
    const runner = startHanging(p, mark, pidFile);
    try {
      await until("the grandchild started", 20_000, () => existsSync(pidFile) && readFileSync(pidFile, "utf8").length > 0);
      const keeperPid = marked(mark).find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("__keeper"));
      expect(keeperPid).toBeNumber();
      process.kill(keeperPid!, "SIGKILL");
      process.kill(runner.pid, "SIGKILL");
      await runner.exited;
      const [running] = phases(p);
      const refused = await agentport(["resume", running!.session_id, "again"], { cwd: p.proj, env: p.env });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toContain(
        `(process group ${running!.agent_pgid}) still runs though its agentport (pid ${runner.pid}) is gone`,
      );
      expect(phases(p)[0]).toMatchObject({ status: "interrupted" });
      process.kill(-running!.agent_pgid!, "SIGKILL");
      await until("the orphaned agent is gone", 5_000, () => !marked(mark).includes(running!.agent_pgid!));
      const again = await agentport(["resume", running!.session_id, "again"], {
        cwd: p.proj,
        env: { ...p.env, AGENTPORT_FAKE_SCENARIO: "text" },
      });
      expect(again.code).toBe(0);
    } finally {
      for (const pid of marked(mark)) process.kill(pid, "SIGKILL");
    }
  });

  // The kernel's promise, not a keeper's: an isolated agent gets none. bwrap (--die-with-parent) dies with
  // agentport, and with it the init of the agent's PID namespace, which takes every process in it.
  // The test above is the control: without --isolate, and with the keeper killed, the agent is left.
  test.if(bwrapWorks())(
    "--isolate: no keeper, and a kill -9 of agentport still ends the agent and its own-session grandchild",
    async () => {
      const p = fakeProject("agentport-keeper-");
      const mark = crypto.randomUUID();
      const pidFile = join(p.proj, "grandchild.pid"); // inside the sandbox only the folder is writable
      const runner = startHanging(p, mark, pidFile, false, ["--isolate"]);
      try {
        await until("the grandchild started", 20_000, () => existsSync(pidFile) && readFileSync(pidFile, "utf8").length > 0);
        const running = marked(mark);
        expect(running.length).toBeGreaterThanOrEqual(4); // agentport, bwrap, its init, the agent, the grandchild
        expect(running.filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("__keeper"))).toEqual([]);
        process.kill(runner.pid, "SIGKILL");
        await runner.exited;
        await until(`the run's processes are gone (left: ${marked(mark).join(", ")})`, 5_000, () => marked(mark).length === 0);
      } finally {
        for (const pid of marked(mark)) process.kill(pid, "SIGKILL");
      }
    },
  );
});
