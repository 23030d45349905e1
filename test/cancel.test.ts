// `agentport cancel` from another process: a running session is stopped by its
// own agentport (aborted, "cancelled by agentport cancel", nothing left); one
// whose agentport was SIGKILLed is finished as interrupted; a finished one is
// said so (exit 0); an unknown id is exit 2.
import { afterAll, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { agentport, BIN, fakeProject, type FakeProject } from "./helpers.ts";
import { groupAlive } from "../src/io/proc.ts";
import { runnerIdentity } from "../src/io/proc-identity.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

interface Row {
  session_id: string;
  agent_pgid: number | null;
  status: string | null;
  failure: string | null;
}

function phase(w: FakeProject): Row | null {
  try {
    const db = new Database(join(w.env.AGENTPORT_HOME!, "ledger.sqlite"), { readonly: true });
    const row = db.query<Row, []>("SELECT session_id, agent_pgid, status, failure FROM phases ORDER BY id DESC LIMIT 1").get();
    db.close();
    return row;
  } catch {
    return null;
  }
}

/** A hanging run, once its agent's group is in the ledger. */
async function hanging(w: FakeProject): Promise<{ runner: Bun.Subprocess; row: Row }> {
  const runner = Bun.spawn([BIN, "run", "--agent", "claude", "--progress", "off", "--json", "hang"], {
    cwd: w.proj,
    env: {
      ...process.env,
      ...w.env,
      NO_COLOR: "1",
      AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps: [{ text: "working" }, { hang: true }] }),
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  for (let i = 0; i < 400; i++) {
    const row = phase(w);
    if (row?.agent_pgid) return { runner, row };
    await Bun.sleep(25);
  }
  throw new Error("the agent never started");
}

test("cancel a running session: its agentport records aborted, nothing is left; cancelling again says it is finished", async () => {
  const w = fakeProject("agentport-cancel-");
  made.push(w.root);
  const { runner, row } = await hanging(w);
  // The tag that proves the agent is this agentport's: its runner's pid and start.
  expect(readFileSync(`/proc/${row.agent_pgid}/environ`, "latin1").split("\0")).toContain(
    `AGENTPORT_AGENT=${runner.pid}@${runnerIdentity(runner.pid).start}`,
  );
  const cancelled = await agentport(["cancel", row.session_id.slice(0, 8)], { cwd: w.proj, env: w.env });
  expect(cancelled.code).toBe(0);
  expect(cancelled.stdout).toContain("stopped: phase 1 aborted");
  expect(await runner.exited).toBe(130);
  const verdict = JSON.parse(await new Response(runner.stdout as ReadableStream).text());
  expect(verdict).toMatchObject({ status: "aborted", ok: false });
  expect(verdict.failure.message).toContain("cancelled by agentport cancel");
  expect(phase(w)).toMatchObject({ status: "aborted", failure: expect.stringContaining("cancelled by agentport cancel") });
  expect(groupAlive(row.agent_pgid!)).toBe(false);
  const again = await agentport(["cancel", row.session_id], { cwd: w.proj, env: w.env });
  expect(again.code).toBe(0);
  expect(again.stdout).toContain("is not running (its last phase: aborted)");
  expect((await agentport(["cancel", "ffffffff"], { cwd: w.proj, env: w.env })).code).toBe(2);
});

test("cancel a session whose agentport was SIGKILLed: the phase is finished as interrupted", async () => {
  const w = fakeProject("agentport-cancel-");
  made.push(w.root);
  const { runner, row } = await hanging(w);
  runner.kill("SIGKILL");
  await runner.exited;
  const cancelled = await agentport(["cancel", row.session_id], { cwd: w.proj, env: w.env });
  expect(cancelled.code).toBe(0);
  expect(phase(w)).toMatchObject({ status: "interrupted" });
  for (let i = 0; i < 100 && groupAlive(row.agent_pgid!); i++) await Bun.sleep(50);
  expect(groupAlive(row.agent_pgid!)).toBe(false);
});

test("a finished session whose recorded agent group number is now another process's (a reused pid): cancel and resume leave it alone", async () => {
  const w = fakeProject("agentport-cancel-");
  made.push(w.root);
  const env = { ...w.env, AGENTPORT_FAKE_SCENARIO: "text" };
  const ran = await agentport(["run", "--agent", "claude", "--json", "--progress", "off", "hi"], { cwd: w.proj, env });
  expect(ran.code).toBe(0);
  const id = JSON.parse(ran.stdout).session_id as string;
  // A bystander leading its own group, as a later process that got the agent's old pid would.
  const bystander = Bun.spawn(["sleep", "60"], { detached: true });
  try {
    const db = new Database(join(w.env.AGENTPORT_HOME!, "ledger.sqlite"));
    db.run("UPDATE phases SET agent_pgid = ? WHERE session_id = ?", [bystander.pid, id]);
    db.close();
    const cancelled = await agentport(["cancel", id], { cwd: w.proj, env });
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain("is not running (its last phase: completed)");
    const resumed = await agentport(["resume", id, "again", "--json", "--progress", "off"], { cwd: w.proj, env });
    expect(resumed.stderr).not.toContain("still runs");
    expect(resumed.code).toBe(0);
    expect(groupAlive(bystander.pid)).toBe(true);
  } finally {
    bystander.kill("SIGKILL");
  }
});
