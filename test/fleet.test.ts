// The fleet queue (#29) through the compiled binary, on a real PostgreSQL:
// workers on separate homes (hosts) run tasks cloned from a local bare
// repository with the fake claude. Exactly-once is proven by counting what
// the agents did (the fake's own log: one line per agent start, with its
// workspace as cwd), not by agentport's rows alone.
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterLapse, graceMs, heartbeatMs, mismatch, overBudget, waiting } from "../src/fleet/rules.ts";
import { agentport } from "./helpers.ts";
import { postgres, usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, LEASE_MS, liveAgents, submit, task, until, worker, type Fleet } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet.test.ts");

/** A task with one retry, its first worker paused (SIGSTOP) past the lease, then a second worker started: both, and the task's id. */
async function pausedPastLease(
  f: Fleet,
): Promise<{ id: string; paused: Bun.Subprocess<"ignore", "pipe", "pipe">; other: Bun.Subprocess<"ignore", "pipe", "pipe"> }> {
  const id = await submit(f, ["--retries", "1", "paused"]);
  const paused = worker(f, host(f, "paused"), ["--once"]);
  await until("the agent to start", () => agentRuns(f).length === 1);
  paused.kill("SIGSTOP");
  await Bun.sleep(Number(LEASE_MS) + 500);
  return { id, paused, other: worker(f, host(f, "other"), ["--once"]) };
}

describe.skipIf(skip)("the fleet queue", () => {
  test("2 workers on 2 hosts and 10 tasks: each task one result and one agent run", async () => {
    const f = await fleet([]);
    const ids = await Promise.all(Array.from({ length: 10 }, (_, i) => submit(f, ["--agent", "claude", `task ${i}`])));
    const workers = [worker(f, host(f, "a"), ["--concurrency", "2"]), worker(f, host(f, "b"), ["--concurrency", "2"])];
    for (const id of ids) {
      const waited = await agentport(["wait", id, "--timeout", "60", "--json"], { env: f.env });
      expect(waited.code).toBe(0);
      expect(JSON.parse(waited.stdout)).toMatchObject({
        id,
        state: "done",
        exit_code: 0,
        attempt: 1,
        runs: 1,
        verdict: { status: "completed" },
      });
    }
    const all = await agentport(["wait", ...ids], { env: f.env });
    expect(all.code).toBe(0);
    expect(all.stdout.trim().split("\n")).toHaveLength(10);
    for (const w of workers) w.kill("SIGTERM");
    expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0]);
    const runs = agentRuns(f);
    expect(runs.map((r) => r.task).sort()).toEqual([...ids].sort());
    const listed = (await agentport(["tasks", "--json"], { env: f.env })).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(listed.map((t) => t.state)).toEqual(Array(10).fill("done"));
    // Each task's verdict is the session its own agent ran.
    for (const t of listed) expect(t.verdict.session_id).toBe(runs.find((r) => r.task === t.id)!.session);
    // The task keeps the flags given, no environment value; the workspaces are gone.
    expect(listed.map((t) => t.request)).toEqual(Array(10).fill({ agent: "claude" }));
    for (const h of ["a", "b"]) expect(readdirSync(join(f.root, h, "fleet", "workspaces"))).toEqual([]);
  }, 120_000);

  test("--key twice is one task; a flag the agent cannot take, and no PostgreSQL ledger, are refused at submit (exit 2), nothing queued", async () => {
    const f = await fleet([]);
    const first = await submit(f, ["--key", "nightly", "one"]);
    expect(await submit(f, ["--key", "nightly", "again"])).toBe(first);
    const refused = await agentport(["submit", "--repo", f.repo, "--agent", "codex", "--max-turns", "3", "x"], { env: f.env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("codex");
    expect(refused.stderr.trim().split("\n")).toHaveLength(1);
    const sqlite = await agentport(["submit", "--repo", f.repo, "--ledger", `sqlite:${join(f.root, "l.sqlite")}`, "x"], { env: f.env });
    expect(sqlite.code).toBe(2);
    expect(sqlite.stderr).toContain("needs a PostgreSQL ledger");
    const listed = (await agentport(["tasks", "--json"], { env: f.env })).stdout.trim().split("\n");
    expect(listed).toHaveLength(1);
    expect(JSON.parse(listed[0]!)).toMatchObject({ id: first, key: "nightly", prompt: "one", state: "queued" });
  }, 60_000);

  test("16 concurrent submits with one key are one task, without a key 16; wait: an unknown task exit 2, a queued one past --timeout exit 4", async () => {
    const f = await fleet([]);
    const keyed = await Promise.all(Array.from({ length: 16 }, (_, i) => submit(f, ["--key", "same", `try ${i}`])));
    expect(new Set(keyed).size).toBe(1);
    const plain = await Promise.all(Array.from({ length: 16 }, (_, i) => submit(f, [`plain ${i}`])));
    expect(new Set(plain).size).toBe(16);
    const listed = (await agentport(["tasks", "--json"], { env: f.env })).stdout.trim().split("\n");
    expect(listed).toHaveLength(17);
    const unknown = await agentport(["wait", "no-such-task"], { env: f.env });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("no task no-such-task");
    const late = await agentport(["wait", keyed[0]!, plain[0]!, "--timeout", "0.5"], { env: f.env });
    expect(late.code).toBe(4);
    expect(late.stderr).toContain("is still queued after 0.5 s");
  }, 60_000);

  test("a repository the worker cannot clone: the task's one result says so (exit 5), no agent started", async () => {
    const f = await fleet([]);
    const id = await submit(f, ["--repo", `file://${join(f.root, "nowhere.git")}`, "x"]);
    const w = worker(f, host(f, "w"), ["--once"]);
    expect(await w.exited).toBe(0);
    expect(await task(f, id)).toMatchObject({ state: "done", exit_code: 5, runs: 0, verdict: { error: { kind: "checkout" } } });
    expect(agentRuns(f)).toEqual([]);
  }, 60_000);

  test("kill -9 of a worker mid-task: the task ends interrupted (no retries) or runs once more (--retries 1); no agent left", async () => {
    // The agent outlives the test's patience for it (8 s against 4): only the keeper ends it in time.
    const f = await fleet([{ sleep: 8000 }]);
    const once = await submit(f, ["no retries"]);
    const again = await submit(f, ["--retries", "1", "one retry"]);
    for (const id of [once, again]) {
      const doomed = worker(f, host(f, `dead-${id}`), ["--once"]);
      await until("the agent to start", () => agentRuns(f).some((r) => r.task === id));
      await Bun.sleep(300);
      doomed.kill("SIGKILL");
      await until("the dead worker's agent to go", () => liveAgents(f).length === 0, 4_000);
    }
    const waited = await agentport(["wait", once, "--timeout", "30", "--json"], { env: f.env });
    expect(waited.code).toBe(130);
    expect(JSON.parse(waited.stdout)).toMatchObject({ state: "interrupted", attempt: 1, runs: 1, verdict: null });
    // Its lease lapses with its agent started: queued again (runs 1 ≤ retries 1), the run counted.
    await until("the retried task to be queued again", async () => (await task(f, again)).state === "queued");
    expect(await task(f, again)).toMatchObject({ attempt: 1, runs: 1, worker: null });
    const rescuer = worker(f, host(f, "rescuer"), ["--once"]);
    expect(await rescuer.exited).toBe(0);
    expect(await task(f, again)).toMatchObject({ state: "done", exit_code: 0, attempt: 2, runs: 2 });
    // Counted by the agents: the interrupted task ran once, the retried one twice (attempts 1 and 2), nothing else.
    const runs = agentRuns(f)
      .map((r) => `${r.task}-${r.attempt}`)
      .sort();
    expect(runs).toEqual([`${once}-1`, `${again}-1`, `${again}-2`].sort());
    expect(liveAgents(f)).toEqual([]);
  }, 120_000);

  test("a worker paused (SIGSTOP) past its lease: its late result is refused by the fencing token; the task's result is the other attempt's", async () => {
    const f = await fleet([{ sleep: 1500 }]);
    const { id, paused, other } = await pausedPastLease(f);
    expect(await other.exited).toBe(0);
    const done = await task(f, id);
    expect(done).toMatchObject({ state: "done", attempt: 2, exit_code: 0 });
    paused.kill("SIGCONT");
    expect(await paused.exited).toBe(0);
    const after = await task(f, id);
    expect(after).toEqual(done);
    const second = agentRuns(f).find((r) => r.attempt === 2);
    expect(after.verdict.session_id).toBe(second!.session);
    expect(agentRuns(f)).toHaveLength(2);
    expect(await new Response(paused.stderr).text()).toMatch(/lease lost|refused/);
  }, 120_000);

  test("a worker that finds its lease lost (paused, then resumed while another attempt runs) stops its own agent and writes nothing", async () => {
    // 15 s: the first agent must outlive the lease's lapse plus the second attempt's start, which at load 13 took over 6 s.
    const f = await fleet([{ sleep: 15_000 }]);
    const { id, paused, other } = await pausedPastLease(f);
    await until("the second attempt's agent to start", () => agentRuns(f).length === 2, 10_000);
    const [first, second] = agentRuns(f);
    expect(liveAgents(f, first!.session)).not.toEqual([]);
    paused.kill("SIGCONT");
    // Its first heartbeat finds the lease gone: its agent is stopped long before its 15 s are up; the other attempt's lives on.
    await until("the paused worker's agent to stop", () => liveAgents(f, first!.session).length === 0, 3_000);
    expect(liveAgents(f, second!.session)).not.toEqual([]);
    expect(await paused.exited).toBe(0);
    expect(await other.exited).toBe(0);
    const done = await task(f, id);
    expect(done).toMatchObject({ state: "done", attempt: 2, runs: 2, exit_code: 0 });
    expect(done.verdict.session_id).toBe(second!.session);
    // Its clock says the lease may have lapsed (the grace), or its renewal finds it lost: either way it stops.
    expect(await new Response(paused.stderr).text()).toMatch(/lease lost, stopping its run|no lease renewal for \d+ s/);
  }, 60_000);

  test("every connection to the queue's database killed (pg_terminate_backend) every 100 ms while a task runs: it still ends done once, by its one agent run", async () => {
    const f = await fleet([{ sleep: 2000 }]);
    const id = await submit(f, ["through the cuts"]);
    const w = worker(f, host(f, "cut"), ["--once"]);
    await until("the agent to start", () => agentRuns(f).length === 1);
    const pg = await postgres();
    const db = new URL(f.url).pathname.slice(1);
    let cuts = 0;
    while (w.exitCode === null) {
      const killed = await pg.admin.unsafe<{ killed: boolean }[]>(
        `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [db],
      );
      cuts += killed.length;
      await Bun.sleep(100);
    }
    expect(cuts).toBeGreaterThan(0);
    expect(w.exitCode).toBe(0);
    expect(await task(f, id)).toMatchObject({ state: "done", exit_code: 0, attempt: 1, runs: 1 });
    expect(agentRuns(f)).toHaveLength(1);
  }, 60_000);

  test("SIGTERM drains: no new claim, the running task finishes and is stored, the worker exits 0", async () => {
    const f = await fleet([{ sleep: 1500 }]);
    const first = await submit(f, ["first"]);
    const w = worker(f, host(f, "drained"));
    await until("the agent to start", () => agentRuns(f).length === 1);
    const second = await submit(f, ["second"]);
    w.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    expect(await task(f, first)).toMatchObject({ state: "done", exit_code: 0 });
    expect(await task(f, second)).toMatchObject({ state: "queued", attempt: 0 });
    expect(agentRuns(f).map((r) => r.task)).toEqual([first]);
  }, 60_000);
});

test("an expired lease: an attempt that never started its agent is queued again; one that did, only while runs ≤ retries", () => {
  expect(afterLapse({ agentStarted: false, runs: 5, retries: 0, cancelRequested: false })).toBe("queued");
  expect(afterLapse({ agentStarted: true, runs: 1, retries: 0, cancelRequested: false })).toBe("interrupted");
  expect(afterLapse({ agentStarted: true, runs: 1, retries: 1, cancelRequested: false })).toBe("queued");
  expect(afterLapse({ agentStarted: true, runs: 2, retries: 1, cancelRequested: false })).toBe("interrupted");
});

test("a cancelled task's lapse is cancelled, whatever its runs; the grace ends a heartbeat before the lease", () => {
  expect(afterLapse({ agentStarted: true, runs: 1, retries: 5, cancelRequested: true })).toBe("cancelled");
  expect(afterLapse({ agentStarted: false, runs: 0, retries: 0, cancelRequested: true })).toBe("cancelled");
  expect(graceMs(30_000)).toBe(25_000);
  expect(graceMs(30_000) + heartbeatMs(30_000)).toBe(30_000);
});

test("placement: agent, every required label, a resume's birth host and folder; waiting says why no live worker can take it", () => {
  const offer = { machineId: "m1", hostname: "box", labels: ["gpu"], agents: ["claude"], workspaces: "/h/fleet/workspaces" };
  const needs = { agent: "claude", requires: ["gpu"], birth: null };
  expect(mismatch(needs, offer)).toBeNull();
  expect(mismatch({ ...needs, agent: "pi" }, offer)).toBe("needs agent pi");
  expect(mismatch({ ...needs, requires: ["gpu", "eu"] }, offer)).toBe("requires eu");
  const birth = { machineId: "m1", hostname: "box", folder: "/h/fleet/workspaces/t-1" };
  expect(mismatch({ ...needs, birth }, offer)).toBeNull();
  expect(mismatch({ ...needs, birth: { ...birth, folder: "/h/fleet/workspaces-other/t-1" } }, offer)).toContain("born on host box");
  expect(mismatch({ ...needs, birth: { ...birth, machineId: "m2" } }, offer)).toContain("(m2)");
  expect(waiting(needs, [])).toBe("no live worker");
  expect(waiting({ ...needs, agent: "pi" }, [offer, offer])).toBe("no live worker can take it: needs agent pi");
  expect(waiting(needs, [{ ...offer, labels: [] }, offer])).toBeNull();
});

test("a budget: closed at or past it, or by a cost nobody reported (never $0)", () => {
  const b = { name: "q", budgetMicroUsd: 30_000, per: "day" as const, spentMicroUsd: 29_999, runningMicroUsd: 0, unknownCosts: 0 };
  expect(overBudget(b)).toBeNull();
  expect(overBudget({ ...b, spentMicroUsd: 30_000 })).toBe("queue q spent $0.0300 of its $0.0300 per day");
  expect(overBudget({ ...b, spentMicroUsd: 30_000, runningMicroUsd: 1 })).toBe(
    "queue q spent $0.0300 of its $0.0300 per day (running tasks so far included)",
  );
  expect(overBudget({ ...b, spentMicroUsd: 0, unknownCosts: 1 })).toContain("reported no cost");
});
