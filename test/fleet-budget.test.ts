// A queue's budget across the fleet, through the compiled binary on a real
// PostgreSQL: `queue set NAME --budget-usd X --per day` is checked by every
// worker before each claim against what the queue's tasks cost this period
// (finished, interrupted, and running ones' cost so far, renewed with their
// lease); past it, its tasks wait (tasks says why) while other queues
// run on; a raised budget lets them go. The fake claude reports $0.0123 a run;
// what ran is counted from its own log.
import { describe, expect, test } from "bun:test";
import { agentport } from "./helpers.ts";
import { usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, lines, liveAgents, submit, task, until, worker } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet-budget.test.ts");

describe.skipIf(skip)("fleet budgets", () => {
  test("a queue past its budget stops being claimed (its tasks wait, tasks says why), another queue runs on; raising the budget lets them run", async () => {
    const f = await fleet([]);
    const set = await agentport(["queue", "set", "nightly", "--budget-usd", "0.03", "--per", "day"], { env: f.env });
    expect(set).toMatchObject({ code: 0, stdout: "queue nightly: $0.03 per day\n", stderr: "" });
    const nightly = [];
    for (let i = 0; i < 5; i++) nightly.push(await submit(f, ["--queue", "nightly", `nightly ${i}`]));
    const other = await submit(f, ["default queue"]);
    const w = worker(f, host(f, "a"));
    // $0.0123 a run: after three runs ($0.0369) the queue is closed.
    await until("the other queue's task", async () => (await task(f, other)).state === "done", 60_000);
    await Bun.sleep(1_500);
    const states = await Promise.all(nightly.map(async (id) => (await task(f, id)).state));
    expect(states).toEqual(["done", "done", "done", "queued", "queued"]);
    expect((await task(f, nightly[3]!)).waiting).toBe("queue nightly spent $0.0369 of its $0.0300 per day");
    expect(JSON.parse((await agentport(["queue", "--json"], { env: f.env })).stdout)).toMatchObject({
      name: "nightly",
      budget_micro_usd: 30_000,
      spent_micro_usd: 36_900,
      per: "day",
      unknown_costs: 0,
    });
    expect((await agentport(["queue"], { env: f.env })).stdout).toBe("nightly  $0.0369 of $0.0300 per day  (closed: its tasks wait)\n");
    expect(agentRuns(f)).toHaveLength(4);
    expect((await agentport(["queue", "set", "nightly", "--budget-usd", "1"], { env: f.env })).code).toBe(0);
    const waited = await agentport(["wait", ...nightly, "--timeout", "60"], { env: f.env });
    expect(waited.code).toBe(0);
    w.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    expect(
      agentRuns(f)
        .map((r) => r.task)
        .sort(),
    ).toEqual([...nightly, other].sort());
  }, 120_000);

  test("a running task's spend so far counts: past the budget, no other task of its queue is claimed while it runs; the running one is not stopped", async () => {
    const f = await fleet([]);
    expect((await agentport(["queue", "set", "live", "--budget-usd", "0.03"], { env: f.env })).code).toBe(0);
    // Its first turn reports $0.04 (claude's results carry the session's cost so far), then it works on for 8 s and ends at $0.05.
    const steps = [{ text: "a" }, { result: { cost_usd: 0.04 } }, { sleep: 8_000 }, { text: "done" }, { result: { cost_usd: 0.05 } }];
    const env = { ...host(f, "a"), AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps }) };
    const first = await submit(f, ["--queue", "live", "first"]);
    const w = worker(f, env, ["--concurrency", "2"]);
    await until("the first task's spend reported with its lease", async () => (await task(f, first)).spent_micro_usd === 40_000, 30_000);
    const second = await submit(f, ["--queue", "live", "second"]);
    await Bun.sleep(2_000);
    expect((await task(f, first)).state).toBe("running");
    expect(await task(f, second)).toMatchObject({
      state: "queued",
      waiting: "queue live spent $0.0400 of its $0.0300 per day (running tasks so far included)",
    });
    expect(JSON.parse((await agentport(["queue", "--json"], { env: f.env })).stdout)).toMatchObject({
      name: "live",
      spent_micro_usd: 40_000,
      running_micro_usd: 40_000,
    });
    // The running task is not stopped: it ends done at its own $0.05; the second still waits.
    await until("the first task's end", async () => (await task(f, first)).state === "done", 30_000);
    expect((await task(f, first)).verdict).toMatchObject({ status: "completed", cost_micro_usd: 50_000 });
    await Bun.sleep(1_500);
    expect((await task(f, second)).state).toBe("queued");
    expect(agentRuns(f).map((r) => r.task)).toEqual([first]);
    w.kill("SIGTERM");
    expect(await w.exited).toBe(0);
  }, 120_000);

  test("a worker killed (kill -9) mid-task: its interrupted attempt's last cost told still counts toward its queue", async () => {
    const f = await fleet([]);
    expect((await agentport(["queue", "set", "q", "--budget-usd", "1"], { env: f.env })).code).toBe(0);
    const steps = [{ text: "a" }, { result: { cost_usd: 0.04 } }, { sleep: 30_000 }, { text: "done" }, { result: { cost_usd: 0.05 } }];
    const id = await submit(f, ["--queue", "q", "doomed"]);
    const w = worker(f, { ...host(f, "a"), AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps }) });
    await until("the spend reported with the lease", async () => (await task(f, id)).spent_micro_usd === 40_000, 30_000);
    w.kill("SIGKILL");
    await until("the lease's lapse", async () => (await task(f, id)).state === "interrupted", 30_000);
    expect(JSON.parse((await agentport(["queue", "--json"], { env: f.env })).stdout)).toMatchObject({
      name: "q",
      spent_micro_usd: 40_000,
      running_micro_usd: 0,
    });
    await until("its agent gone", () => liveAgents(f).length === 0);
  }, 120_000);

  test("a task's own --max-cost is checked at submit and reaches its run on the worker (the session is born with it)", async () => {
    const f = await fleet([]);
    const bad = await agentport(["submit", "--repo", f.repo, "--max-cost", "lots", "x"], { env: f.env });
    expect(bad.code).toBe(2);
    const id = await submit(f, ["--max-cost", "0.001", "capped"]);
    expect(await worker(f, host(f, "a"), ["--once"]).exited).toBe(0);
    const done = await task(f, id);
    expect(done).toMatchObject({ state: "done", request: { "max-cost": "0.001" } });
    // The worker's run was born with it: the ledger's session row says so.
    const shown = JSON.parse((await agentport(["show", done.verdict.session_id, "--json"], { env: f.env })).stdout);
    expect(JSON.parse(shown.session?.request ?? shown.request)).toMatchObject({ "max-cost": 0.001 });
  }, 60_000);

  test("bad input: exit 2, one line, nothing set", async () => {
    const f = await fleet([]);
    for (const args of [
      ["queue", "set", "nightly"],
      ["queue", "set", "nightly", "--budget-usd", "-1"],
      ["queue", "set", "nightly", "--budget-usd", "lots"],
      ["queue", "set", "nightly", "--budget-usd", "1", "--per", "year"],
      ["queue", "set", "a b", "--budget-usd", "1"],
      ["queue", "set", "--budget-usd", "1"],
      ["queue", "frobnicate"],
      ["submit", "--repo", f.repo, "--queue", "a b", "x"],
    ]) {
      const ran = await agentport(args, { env: f.env });
      expect({ args, code: ran.code }).toEqual({ args, code: 2 });
      expect(lines(ran.stderr)).toHaveLength(1);
    }
    expect((await agentport(["queue"], { env: f.env })).stdout).toBe("");
    expect((await agentport(["tasks"], { env: f.env })).stdout).toBe("");
  }, 60_000);
});
