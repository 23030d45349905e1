// `cancel` kills only agentport's own agents (issue 24, item 7), through the
// compiled binary: a row that names a process of this host which agentport
// did not start (an imported row, or one written into the ledger by hand, as
// anyone with a shared ledger can) never makes `cancel` signal it. The victim
// is a `sleep` in its own process group; it lives, and cancel says why in one line.
import { afterAll, afterEach, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { exportedPhase, exportedSession } from "./exported-row.ts";
import { agentport, fakeProject } from "./helpers.ts";
import { isRunning } from "../src/io/proc.ts";
import { runnerIdentity } from "../src/io/proc-identity.ts";

const made: string[] = [];
const victims: Bun.Subprocess[] = [];
afterEach(() => {
  for (const v of victims.splice(0)) v.kill("SIGKILL");
});
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A process that is not agentport's, leading its own group. */
function victim(): { pid: number; start: string } {
  const child = Bun.spawn(["sleep", "300"], { stdin: "ignore", stdout: "ignore", stderr: "ignore", detached: true });
  victims.push(child);
  return { pid: child.pid, start: runnerIdentity(child.pid).start };
}

/** A session with one open phase whose runner and agent are the victim. */
function pointingAt(v: { pid: number; start: string }, project: string) {
  const open = {
    runner_pid: v.pid,
    runner_start: v.start,
    runner_host: hostname(),
    agent_pgid: v.pid,
    agent_start: v.start,
    ended_at: null,
    status: null,
    ok: null,
    tokens_in: null,
    tokens_out: null,
    tokens_cache_read: null,
    tokens_cache_write: null,
    cost_micro_usd: null,
    seconds: null,
  };
  return exportedSession({ id: `victim-${crypto.randomUUID()}`, cwd: project, phases: [exportedPhase(open)] });
}

const refusedOnce = (ran: { code: number; stderr: string }) => {
  expect(ran.code).toBe(3);
  const lines = ran.stderr.split("\n").filter((l) => l.trim() !== "");
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain("refused");
  expect(ran.stderr).not.toContain("    at ");
};

test("an imported row naming a sleep as its runner and agent: cancel refuses in one line, the sleep lives", async () => {
  const w = fakeProject("agentport-cancel-foreign-");
  made.push(w.root);
  const v = victim();
  const row = pointingAt(v, w.proj);
  const file = join(w.root, "export.ndjson");
  writeFileSync(file, `${JSON.stringify(row)}\n`);
  expect((await agentport(["import", file], { cwd: w.proj, env: w.env })).code).toBe(0);
  const ran = await agentport(["cancel", row.id], { cwd: w.proj, env: w.env });
  refusedOnce(ran);
  await Bun.sleep(200);
  expect(isRunning(v.pid)).toBe(true);
});

test.each([
  ["its runner (alive, its start time right)", (v: { pid: number; start: string }) => ({ runner_pid: v.pid, runner_start: v.start })],
  [
    "its agent (the runner gone)",
    (v: { pid: number; start: string }) => ({ runner_pid: 999_999_999, runner_start: `${v.start.split(":")[0]}:1` }),
  ],
])("a row written into the ledger by hand naming a sleep as %s: cancel refuses, the sleep lives", async (_name, runner) => {
  const w = fakeProject("agentport-cancel-foreign-");
  made.push(w.root);
  // A real ledger first (the schema), then the row as someone with write access to it would add it.
  expect((await agentport(["run", "--agent", "claude", "--json", "hi"], { cwd: w.proj, env: w.env })).code).toBe(0);
  const v = victim();
  const id = `forged-${crypto.randomUUID()}`;
  const db = new Database(join(w.env.AGENTPORT_HOME!, "ledger.sqlite"));
  db.run("INSERT INTO sessions (id, agent, cwd, declared_at) VALUES (?, 'claude', ?, '2026-11-30T10:00:00.000Z')", [id, w.proj]);
  const r = runner(v);
  db.run(
    "INSERT INTO phases (session_id, seq, kind, started_at, runner_pid, runner_start, runner_host, agent_pgid, agent_start) VALUES (?, 1, 'run', '2026-11-30T10:00:01.000Z', ?, ?, ?, ?, ?)",
    [id, r.runner_pid, r.runner_start, hostname(), v.pid, v.start],
  );
  db.close();
  const ran = await agentport(["cancel", id], { cwd: w.proj, env: w.env });
  refusedOnce(ran);
  // Nor does resume take the sleep for the session's agent (and tell the user to kill its group).
  const resumed = await agentport(["resume", id, "again"], { cwd: w.proj, env: w.env });
  expect(resumed.stderr).not.toContain(`kill -- -${v.pid}`);
  await Bun.sleep(200);
  expect(isRunning(v.pid)).toBe(true);
});
