// The fleet queue's cancel, results, workers and labels through the compiled
// binary, on a real PostgreSQL, workers on separate homes (hosts) running the
// fake claude. What the agents did is counted from the fake's own log.
import { describe, expect, test } from "bun:test";
import { agentport } from "./helpers.ts";
import { usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, lines, liveAgents, submit, task, until, worker } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet-commands.test.ts");

describe.skipIf(skip)("cancel, results, workers, labels", () => {
  test("cancel: a queued task at once (nothing runs); a running one by its worker at its next beat (its agent stopped, the run stored cancelled, the worker goes on); a final one says so", async () => {
    const f = await fleet([{ sleep: 20_000 }]);
    const queued = await submit(f, ["never runs"]);
    const cancelled = await agentport(["cancel", queued], { env: f.env });
    expect(cancelled).toMatchObject({ code: 0, stderr: "" });
    expect(cancelled.stdout).toContain(`task ${queued} cancelled (it was queued: nothing ran)`);
    expect(await task(f, queued)).toMatchObject({ state: "cancelled", exit_code: 130, attempt: 0, runs: 0 });
    const running = await submit(f, ["runs long"]);
    const w = worker(f, host(f, "a"));
    await until("the agent to start", () => agentRuns(f).length === 1);
    expect(agentRuns(f)[0]!.task).toBe(running);
    // From another box (another home): through the database only.
    const asked = performance.now();
    const stopped = await agentport(["cancel", running, "--json"], { env: { ...host(f, "elsewhere") } });
    expect(stopped.stderr).toBe("");
    expect(stopped.code).toBe(0);
    expect(performance.now() - asked).toBeLessThan(10_000);
    expect(JSON.parse(stopped.stdout)).toMatchObject({ task_id: running, was: "running", state: "cancelled" });
    expect(liveAgents(f)).toEqual([]);
    const after = await task(f, running);
    expect(after).toMatchObject({ state: "cancelled", attempt: 1, runs: 1, worker: null });
    expect(after.verdict.failure?.message ?? JSON.stringify(after.verdict)).toContain("cancelled by agentport cancel");
    expect((await agentport(["wait", running], { env: f.env })).code).toBe(after.exit_code);
    // The worker is still there and takes the next task.
    const next = await submit(f, ["--key", "after", "next"]);
    await until("the next agent to start", () => agentRuns(f).length === 2);
    expect(w.exitCode).toBeNull();
    expect((await agentport(["cancel", next], { env: f.env })).code).toBe(0);
    const again = await agentport(["cancel", queued], { env: f.env });
    expect(again).toMatchObject({ code: 0, stdout: `task ${queued} was already cancelled\n` });
    w.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    // Counted by the agents: two runs, the two tasks that were running; the queued one never ran.
    expect(agentRuns(f).map((r) => r.task)).toEqual([running, next]);
  }, 90_000);

  test("cancel of a task whose worker died (kill -9): its lease's expiry ends it cancelled, not interrupted nor retried", async () => {
    const f = await fleet([{ sleep: 20_000 }]);
    const id = await submit(f, ["--retries", "3", "doomed"]);
    const w = worker(f, host(f, "dead"), ["--once"]);
    await until("the agent to start", () => agentRuns(f).length === 1);
    w.kill("SIGKILL");
    const stopped = await agentport(["cancel", id], { env: f.env });
    expect(stopped).toMatchObject({ code: 0, stderr: "" });
    expect(await task(f, id)).toMatchObject({ state: "cancelled", exit_code: 130, runs: 1 });
    await until("the dead worker's agent to go", () => liveAgents(f).length === 0, 5_000);
    // A worker started now finds nothing to do.
    expect(await worker(f, host(f, "later"), ["--once"]).exited).toBe(0);
    expect(agentRuns(f)).toHaveLength(1);
  }, 60_000);

  test("results: the verdicts of finished tasks only (--json one per line); a task not finished is exit 2, one line", async () => {
    const f = await fleet([]);
    const [a, b] = [await submit(f, ["first"]), await submit(f, ["second"])];
    expect(await worker(f, host(f, "w"), ["--once"]).exited).toBe(0);
    expect(await task(f, a)).toMatchObject({ state: "done" });
    const none = await agentport(["results", b], { env: f.env });
    expect(none.code).toBe(2);
    expect(lines(none.stderr)).toEqual([`[error] task ${b} is still queued: no result yet (agentport wait ${b})`]);
    const all = await agentport(["results", "--json"], { env: f.env });
    expect(all.code).toBe(0);
    const results = lines(all.stdout).map((l) => JSON.parse(l));
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      id: a,
      state: "done",
      exit_code: 0,
      attempt: 1,
      runs: 1,
      verdict: { status: "completed", session_id: agentRuns(f)[0]!.session },
    });
    const text = await agentport(["results", a], { env: f.env });
    expect(text.stdout).toMatch(new RegExp(`^${a}\\s+done\\s+exit 0\\s+completed.*session ${agentRuns(f)[0]!.session}\\n$`));
    expect((await agentport(["results", "no-such"], { env: f.env })).code).toBe(2);
  }, 60_000);

  test("labels: a task --requires gpu waits (tasks says why) until a worker with --label gpu takes it; workers lists the live ones with labels, agents and tasks", async () => {
    const f = await fleet([{ sleep: 1500 }]);
    const gpu = await submit(f, ["--requires", "gpu", "--requires", "region=eu", "needs a gpu"]);
    const plain = await submit(f, ["anyone"]);
    const a = worker(f, host(f, "a"), ["--agents", "claude"]);
    await until("the plain task to be done", async () => (await task(f, plain)).state === "done");
    const listed = await agentport(["tasks"], { env: f.env });
    expect(listed.stdout).toContain(`${gpu}  queued`);
    expect(listed.stdout).toContain("(waiting: no live worker can take it: requires gpu, region=eu)");
    expect((await task(f, gpu)).waiting).toBe("no live worker can take it: requires gpu, region=eu");
    const b = worker(f, host(f, "b"), ["--label", "gpu", "--label", "region=eu", "--label", "gpu"]);
    await until("the gpu task's agent to start", () => agentRuns(f).some((r) => r.task === gpu));
    const workers = lines((await agentport(["workers", "--json"], { env: f.env })).stdout).map((l) => JSON.parse(l));
    expect(workers).toHaveLength(2);
    expect(workers.map((w) => w.labels)).toEqual([[], ["gpu", "region=eu"]]);
    // --agents names them; without it, every agent installed here (the fake claude, and what else this box has).
    expect(workers[0].agents).toEqual(["claude"]);
    expect(workers[1].agents).toContain("claude");
    expect(workers.map((w) => w.machine_id)).toEqual(["a-machine", "b-machine"]);
    expect(workers[1].tasks).toEqual([gpu]);
    expect((await agentport(["workers"], { env: f.env })).stdout).toContain("labels gpu,region=eu  running 1/1");
    await until("the gpu task to be done", async () => (await task(f, gpu)).state === "done");
    a.kill("SIGTERM");
    expect(await a.exited).toBe(0);
    expect(lines((await agentport(["workers", "--json"], { env: f.env })).stdout).map((l) => JSON.parse(l).machine_id)).toEqual([
      "b-machine",
    ]);
    b.kill("SIGTERM");
    expect(await b.exited).toBe(0);
    expect((await agentport(["workers"], { env: f.env })).stdout).toBe("");
    expect(
      agentRuns(f)
        .map((r) => r.task)
        .sort(),
    ).toEqual([gpu, plain].sort());
    // With no live worker at all, tasks says that too.
    const later = await submit(f, ["later"]);
    expect((await task(f, later)).waiting).toBe("no live worker");
  }, 90_000);

  test("bad input: exit 2, one line, nothing queued, no worker entered", async () => {
    const f = await fleet([]);
    const bad = [
      ["submit", "--repo", f.repo, "--requires", "no spaces", "x"],
      ["submit", "--repo", f.repo, "--requires", "-gpu", "x"],
      ["submit", "--resume", "no-such-task", "x"],
      ["submit", "--resume", "no-such-task", "--repo", f.repo, "x"],
      ["worker", "--label", "a b"],
      ["worker", "--agents", "claude,nope"],
      ["worker", "--concurrency", "0"],
      ["cancel", "no-such-task"],
      ["results", "no-such-task"],
    ];
    for (const args of bad) {
      const ran = await agentport(args, { env: f.env });
      expect({ args, code: ran.code }).toEqual({ args, code: 2 });
      expect(lines(ran.stderr)).toHaveLength(1);
    }
    expect((await agentport(["tasks"], { env: f.env })).stdout).toBe("");
    expect((await agentport(["workers"], { env: f.env })).stdout).toBe("");
  }, 60_000);
});
