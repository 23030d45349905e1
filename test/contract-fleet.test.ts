// The fleet's contract: what `submit`, `task`, `tasks`, `wait`, `results`,
// `workers` and `queue` print with --json, through the compiled binary on a
// real PostgreSQL with a real worker, validates against the published schema
// (schemas/task.json, result.json, worker.json, queue.json, group.json,
// ranking.json) under ajv.
import { describe, expect, test } from "bun:test";
import { agentport } from "./helpers.ts";
import { usePostgres } from "./pg.ts";
import { fleet, host, lines, worker } from "./fleet-fixture.ts";
import { problems } from "./schemas.ts";

const skip = usePostgres("test/contract-fleet.test.ts");

describe.skipIf(skip)("the fleet's --json records validate", () => {
  test("submit, task, tasks, wait, results, workers, queue, and an --arms group and its ranking: each record under its schema", async () => {
    const f = await fleet([]);
    const json = async (args: string[]): Promise<Record<string, unknown>[]> => {
      const ran = await agentport([...args, "--json"], { env: f.env });
      expect({ args, code: ran.code, stderr: ran.stderr }).toEqual({ args, code: 0, stderr: "" });
      return lines(ran.stdout).map((l) => JSON.parse(l));
    };
    expect((await agentport(["queue", "set", "nightly", "--budget-usd", "1"], { env: f.env })).code).toBe(0);
    // No worker yet: the task waits, and says why.
    const [submitted] = await json(["submit", "--repo", f.repo, "--queue", "nightly", "first"]);
    expect(problems("task", submitted)).toEqual([]);
    expect(submitted).toMatchObject({ state: "queued", queue: "nightly", verdict: null, waiting: expect.any(String) });
    // A task no worker here can take: still queued at the end.
    const [stuck] = await json(["submit", "--repo", f.repo, "--requires", "gpu", "second"]);
    expect(problems("task", stuck)).toEqual([]);
    const w = worker(f, host(f, "a"), ["--label", "cpu"]);
    const [done] = await json(["wait", String(submitted!.id), "--timeout", "60"]);
    expect(problems("task", done)).toEqual([]);
    expect(done).toMatchObject({ state: "done", exit_code: 0, waiting: null, verdict: { status: "completed" } });
    const [shown] = await json(["task", String(submitted!.id)]);
    expect(problems("task", shown)).toEqual([]);
    const listed = await json(["tasks"]);
    expect(listed.map((t) => t.state)).toEqual(["done", "queued"]);
    expect(listed[1]!.waiting).toContain("gpu");
    for (const t of listed) expect(problems("task", t)).toEqual([]);
    const results = await json(["results"]);
    expect(results).toHaveLength(1);
    for (const r of results) expect(problems("result", r)).toEqual([]);
    const workers = await json(["workers"]);
    expect(workers).toHaveLength(1);
    expect(workers[0]).toMatchObject({ labels: ["cpu"], tasks: [] });
    for (const r of workers) expect(problems("worker", r)).toEqual([]);
    const queues = await json(["queue"]);
    expect(queues.map((q) => q.name)).toEqual(["nightly"]);
    expect(queues[0]).toMatchObject({ budget_micro_usd: 1_000_000, closed: null });
    for (const q of queues) expect(problems("queue", q)).toEqual([]);
    // Best-of-N across boxes: the group submit --arms prints, and its ranking once both arms reported.
    const [group] = await json(["submit", "--repo", f.repo, "--arms", "2", "--gate", "true", "arms"]);
    expect(problems("group", group)).toEqual([]);
    expect((group!.tasks as unknown[]).length).toBe(2);
    const [ranking] = await json(["wait", String(group!.id), "--timeout", "60"]);
    expect(problems("ranking", ranking)).toEqual([]);
    expect(ranking).toMatchObject({ group: group!.id, winner: { arm: expect.any(Number) } });
    w.kill("SIGTERM");
    expect(await w.exited).toBe(0);
  }, 90_000);

  test("the validator refuses what breaks the fleet's contract", () => {
    expect(problems("task", { id: "x", state: "lost" }).length).toBeGreaterThan(0);
    expect(problems("worker", { id: "w", machineId: "m" }).length).toBeGreaterThan(0);
    expect(problems("queue", { name: "q", budgetMicroUsd: 1 }).length).toBeGreaterThan(0);
    expect(problems("result", { id: "x", state: "done", exit_code: "0" }).length).toBeGreaterThan(0);
    expect(problems("group", { id: "g", key: null, created_at: "now", tasks: [{ id: "x" }] }).length).toBeGreaterThan(0);
    expect(problems("ranking", { group: "g", key: null, arms: [{ rank: "1" }], winner: null }).length).toBeGreaterThan(0);
  });
});
