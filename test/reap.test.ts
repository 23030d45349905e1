// The reaper: a command that opens the ledger finishes the phases whose
// agentport is gone (interrupted, with when it was noticed), and only those:
// a live runner, another host's runner and a phase that names no runner are
// left open. Through the real ledger on disk.
import { describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { MIGRATIONS } from "../src/io/ledger-schema.ts";
import { connectLedger, type Ledger } from "../src/io/ledger.ts";
import { runnerIdentity } from "../src/io/proc-identity.ts";
import { stillRunning, tidyLedger } from "../src/io/reap.ts";
import { tempDir } from "./helpers.ts";

async function withSession(ledger: Ledger): Promise<string> {
  const s = await ledger.declareSession({ agent: "claude", cwd: "/tmp" });
  return s.id;
}

describe("finishing what a gone runner left open", () => {
  test("a dead runner's phase is interrupted; a live one, another host's and an unnamed one stay open", async () => {
    const home = tempDir("agentport-reap-");
    await using ledger = await connectLedger(home);
    const me = runnerIdentity();
    // A pid that cannot run (above the kernel's pid ceiling) on this host and boot.
    const dead = { ...me, pid: 4_999_999 };
    const ids = {
      dead: (await ledger.startPhase({ sessionId: await withSession(ledger), kind: "run", runner: dead })).id,
      alive: (await ledger.startPhase({ sessionId: await withSession(ledger), kind: "run" })).id,
      elsewhere: (await ledger.startPhase({ sessionId: await withSession(ledger), kind: "run", runner: { ...dead, host: "another-box" } }))
        .id,
      unnamed: (await ledger.startPhase({ sessionId: await withSession(ledger), kind: "run", runner: null })).id,
      rebooted: (
        await ledger.startPhase({
          sessionId: await withSession(ledger),
          kind: "run",
          runner: { ...me, start: `another-boot:${me.start.split(":")[1]}` },
        })
      ).id,
    };
    await ledger.setPhaseAgent(ids.dead, { pgid: 4_999_998, start: `${me.start.split(":")[0]}:1` });
    expect(await ledger.getPhase(ids.alive)).toMatchObject({
      runner_pid: process.pid,
      runner_start: me.start,
      runner_host: me.host,
      agent_pgid: null,
    });

    expect(await tidyLedger(ledger, home)).toEqual({ recorded: 0, interrupted: 2 });
    const dying = await ledger.getPhase(ids.dead);
    expect(dying).toMatchObject({
      status: "interrupted",
      ok: false,
      agent_pgid: 4_999_998,
      details: { runner_pid: 4_999_999, agent_pgid: 4_999_998 },
    });
    expect(dying!.failure).toStartWith("interrupted: agentport (pid 4999999) was gone before the phase finished; noticed ");
    expect((await ledger.getPhase(ids.rebooted))?.status).toBe("interrupted");
    for (const open of [ids.alive, ids.elsewhere, ids.unnamed]) expect((await ledger.getPhase(open))?.ended_at).toBeNull();
    expect((await ledger.runningPhases()).map((p) => p.id)).toEqual([ids.alive, ids.elsewhere, ids.unnamed]);
    // A second look changes nothing.
    expect(await tidyLedger(ledger, home)).toEqual({ recorded: 0, interrupted: 0 });
  });

  test("stillRunning names the live phase of a session, not a finished or gone one", async () => {
    const home = tempDir("agentport-reap-");
    await using ledger = await connectLedger(home);
    const id = await withSession(ledger);
    expect(await stillRunning(ledger, id)).toBeNull();
    const phase = await ledger.startPhase({ sessionId: id, kind: "run" });
    expect(await stillRunning(ledger, id)).toMatchObject({ id: phase.id, state: "alive", runner_pid: process.pid });
    await ledger.finishPhase(phase.id, {
      status: "completed",
      ok: true,
      tokens: null,
      costMicroUsd: null,
      seconds: 1,
      stopReason: null,
      failure: null,
    });
    expect(await stillRunning(ledger, id)).toBeNull();
  });

  test("a ledger from before the runner columns migrates; its open phases name no runner and stay open", async () => {
    const home = tempDir("agentport-reap-");
    const db = new Database(join(home, "ledger.sqlite"), { create: true });
    for (const m of MIGRATIONS.slice(0, 2)) db.run(m.sqlite);
    db.run(`PRAGMA user_version = 2`);
    db.run(`INSERT INTO sessions (id, agent, cwd, declared_at) VALUES ('old', 'pi', '/tmp', '2026-01-01T00:00:00.000Z')`);
    db.run(`INSERT INTO phases (session_id, seq, kind, started_at) VALUES ('old', 1, 'run', '2026-01-01T00:00:01.000Z')`);
    db.close();
    await using ledger = await connectLedger(home);
    expect(await tidyLedger(ledger, home)).toEqual({ recorded: 0, interrupted: 0 });
    expect(await ledger.runningPhases()).toMatchObject([
      { session_id: "old", runner_pid: null, runner_start: null, runner_host: null, agent_pgid: null },
    ]);
  });
});
