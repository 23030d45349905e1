// Agents die with agentport: a `kill -9` of agentport takes the agent, its
// children and a grandchild that made a session of its own with it (the
// keeper), and the next command finishes the phase as interrupted.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BIN, fakeProject, type FakeProject } from "./helpers.ts";

/** Every live process whose environment carries `mark`: the run's, wherever they regrouped. */
function marked(mark: string): number[] {
  const needle = `AGENTPORT_TEST_MARK=${mark}\0`;
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

async function until(what: string, ms: number, check: () => boolean): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await Bun.sleep(25);
  }
}

/** A hanging agent with a grandchild in a session of its own, under a running agentport. */
function startHanging(p: FakeProject, mark: string, pidFile: string): Bun.Subprocess {
  const scenario = JSON.stringify({ steps: [{ text: "working" }, { grandchild: pidFile, ownGroup: true }, { hang: true }] });
  return Bun.spawn([BIN, "run", "--agent", "claude", "--progress", "off", "hang"], {
    cwd: p.proj,
    env: { ...process.env, ...p.env, NO_COLOR: "1", AGENTPORT_FAKE_SCENARIO: scenario, AGENTPORT_TEST_MARK: mark },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "ignore",
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
      process.kill(runner.pid, "SIGKILL");
      await runner.exited;
      await until(`the run's processes are gone (left: ${marked(mark).join(", ")})`, 5_000, () => marked(mark).length === 0);
    } finally {
      for (const pid of marked(mark)) process.kill(pid, "SIGKILL");
    }
  });
});
