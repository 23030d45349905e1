// The fleet queue's database going away mid-run, with a real PostgreSQL
// stopped (as a crash: pg_ctl -m immediate) and started again: a worker keeps
// its running agent through an outage shorter than its grace, stops it before
// its lease can lapse in a longer one, and nothing runs twice after the
// database is back (the attempt fencing holds). Counted from the fake
// claude's own log and the live processes.
import { describe, expect, test } from "bun:test";
import { agentport } from "./helpers.ts";
import { postgres, usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, lines, liveAgents, submit, task, until, worker } from "./fleet-fixture.ts";

// Its own server: it halts and restarts it.
const skip = usePostgres("test/fleet-outage.test.ts", { own: true });
/** A lease of 6 s: renewed every 1 s, a grace of 5 s. */
const LEASE = { AGENTPORT_LEASE_MS: "6000" };

describe.skipIf(skip)("the queue's database down mid-run", () => {
  test("an outage shorter than the grace: the agent runs on, the task ends done once; submit meanwhile is exit 5, one line, no password", async () => {
    // The agent outlasts the outage by a wide margin: its run records its finish in the same database, once it is back.
    const f = await fleet([{ sleep: 10_000 }]);
    const id = await submit(f, ["through a restart"]);
    const w = worker(f, { ...host(f, "a"), ...LEASE }, ["--once"]);
    await until("the agent to start", () => agentRuns(f).length === 1);
    const pg = await postgres();
    await pg.halt();
    try {
      const refused = await agentport(["submit", "--repo", f.repo, "while down"], { env: f.env });
      expect(refused.code).toBe(5);
      expect(lines(refused.stderr)).toHaveLength(1);
      expect(refused.stderr).not.toContain(new URL(f.url).password);
      await Bun.sleep(1_500);
      expect(liveAgents(f)).not.toEqual([]);
    } finally {
      pg.restart();
    }
    expect(await w.exited).toBe(0);
    expect(await task(f, id)).toMatchObject({ state: "done", exit_code: 0, attempt: 1, runs: 1 });
    expect(agentRuns(f)).toHaveLength(1);
  }, 90_000);

  test("an outage past the grace: the worker stops its agent while the database is down (writes nothing); once it is back the lease has lapsed, the retry runs attempt 2 after attempt 1's agent is gone, one result", async () => {
    const f = await fleet([{ sleep: 30_000 }]);
    const id = await submit(f, ["--retries", "1", "past the grace"]);
    const w = worker(f, { ...host(f, "a"), ...LEASE });
    await until("the agent to start", () => agentRuns(f).length === 1);
    const pg = await postgres();
    const down = performance.now();
    await pg.halt();
    try {
      await until("the agent to be stopped while the database is down", () => liveAgents(f).length === 0, 12_000);
      expect(performance.now() - down).toBeLessThan(9_000);
      expect(agentRuns(f)).toHaveLength(1);
      await Bun.sleep(Math.max(0, 7_000 - (performance.now() - down)));
    } finally {
      pg.restart();
    }
    // The same worker settles the lapsed lease (runs 1 ≤ retries 1: queued again) and runs attempt 2.
    await until("attempt 2's agent to start", () => agentRuns(f).length === 2, 30_000);
    expect(agentRuns(f).map((r) => `${r.task}-${r.attempt}`)).toEqual([`${id}-1`, `${id}-2`]);
    expect(liveAgents(f)).toHaveLength(1);
    expect((await agentport(["cancel", id], { env: f.env })).code).toBe(0);
    expect(await task(f, id)).toMatchObject({ state: "cancelled", attempt: 2, runs: 2 });
    w.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    const said = await new Response(w.stderr).text();
    expect(said).toContain(
      `task ${id} attempt 1: no lease renewal for 5 s (the queue unreachable): stopping its run before the lease lapses; nothing written`,
    );
    expect(said).not.toContain("postgres://agentport:s3cret");
    expect(agentRuns(f)).toHaveLength(2);
  }, 120_000);
});
