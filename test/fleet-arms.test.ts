// Best-of-N across boxes (#29): `submit --arms N --models a,b --gate CMD`
// queues one task per arm; workers on separate homes (hosts) run them with
// the fake claude, whose tool writes `<model>.txt`; each arm's gates run in
// its workspace; `wait GROUP` / `results GROUP` rank the arms as bon does.
// Each arm ran once, counted by the fake agent's own log.
import { describe, expect, test } from "bun:test";
import { pending, rankGroup } from "../src/fleet/arms.ts";
import type { Task } from "../src/fleet/queue.ts";
import { agentport } from "./helpers.ts";
import { usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, lines, submit, worker } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet-arms.test.ts");

/** The fake's tool writes `<its --model>.txt` in its workspace (read from its own argv). */
const WRITE_MODEL_FILE = `m=$(tr '\\0' '\\n' </proc/$PPID/cmdline | sed -n '/^--model$/{n;p;}'); touch "$m.txt"`;

/** An arm's task as the queue returns it: only what the ranking reads is set. */
const armTask = (arm: number, t: Partial<Task> & { cost?: number | null }): Task =>
  ({
    id: `task-${arm}`,
    arm,
    state: "done",
    exit_code: 0,
    request: { agent: "claude" },
    gates: [],
    gate_results: null,
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:00:10.000Z",
    verdict: { status: t.exit_code ? "failed" : "completed", cost_micro_usd: t.cost === undefined ? 500 : t.cost, tokens: null },
    ...t,
  }) as Task;

test("the ranking (pure): green is done, exit 0 and every gate 0; then bon's rule (cheapest, fastest, arm); an arm not final says so", () => {
  const gate = (exit_code: number | null) => ({ command: "make test", exit_code, tail: "" });
  const group = {
    id: "g",
    key: null,
    created_at: "",
    tasks: [
      armTask(1, { gates: ["make test"], gate_results: [gate(0)] }),
      armTask(2, { cost: 100 }),
      armTask(3, { state: "interrupted", exit_code: 130, cost: 1 }),
      armTask(4, { exit_code: 1, cost: 2 }),
      armTask(5, { gates: ["make test", "make lint"], gate_results: null, cost: 3 }),
      armTask(6, { cost: null }),
      armTask(7, { gates: ["make test"], gate_results: [gate(null)], cost: 4 }),
      armTask(8, { finished_at: "2026-01-01T00:00:05.000Z" }),
    ],
  };
  const ranking = rankGroup(group);
  expect(ranking.arms.map((a) => [a.arm, a.green, a.reason])).toEqual([
    [2, true, ""],
    [8, true, ""],
    [1, true, ""],
    [6, true, ""],
    [3, false, "the task ended interrupted"],
    [4, false, "the run exited 1 (failed)"],
    [5, false, "its gates did not run"],
    [7, false, "gate `make test` did not finish"],
  ]);
  expect(ranking.arms[1]!.seconds).toBe(5);
  expect(ranking.winner).toEqual({ arm: 2, task: "task-2", model: null });
  expect(pending(group)).toBeNull();
  expect(pending({ ...group, tasks: [...group.tasks, armTask(9, { state: "running" })] })).toBe("arm 9 (task task-9) is still running");
});

describe.skipIf(skip)("best-of-N across boxes", () => {
  test("3 arms (alpha, beta, alpha) on 2 hosts, gate `test -f alpha.txt`: each arm runs once; the alpha arms rank green first, the beta arm red last; --key twice is one group", async () => {
    // 1.5 s a run, one at a time per worker: both hosts take an arm.
    const f = await fleet([{ sleep: 1500 }, { tool: { name: "Bash", input: {}, run: WRITE_MODEL_FILE } }]);
    const secret = "arms-gate-secret-4711";
    const args = ["--arms", "3", "--models", "alpha,beta", "--gate", "test -f alpha.txt", "--gate", "echo gate-ok $ARMS_API_KEY"];
    const group = await submit(f, [...args, "--key", "bon-1", "fix it"]);
    expect(await submit(f, [...args, "--key", "bon-1", "fix it again"])).toBe(group);
    const queued = lines((await agentport(["tasks", "--json"], { env: f.env })).stdout).map((l) => JSON.parse(l));
    expect(queued).toHaveLength(3);
    expect(queued.map((t) => [t.group_id, t.arm, t.request.model, t.gates])).toEqual(
      [1, 2, 3].map((arm) => [group, arm, arm === 2 ? "beta" : "alpha", ["test -f alpha.txt", "echo gate-ok $ARMS_API_KEY"]]),
    );
    // Before every arm has reported there is no ranking: said, exit 2.
    const early = await agentport(["results", group], { env: f.env });
    expect(early.code).toBe(2);
    expect(early.stderr).toContain("is still queued");
    expect(lines(early.stderr)).toHaveLength(1);
    const late = await agentport(["wait", group, "--timeout", "0.3"], { env: f.env });
    expect(late.code).toBe(4);
    expect(late.stderr).toMatch(new RegExp(`group ${group}: arm 1 \\(task [0-9a-f-]{36}\\) is still queued after 0.3 s`));

    const workers = ["a", "b"].map((h) => worker(f, { ...host(f, h), ARMS_API_KEY: secret }));
    const waited = await agentport(["wait", group, "--timeout", "90", "--json"], { env: f.env });
    for (const w of workers) w.kill("SIGTERM");
    expect(waited.code).toBe(0);
    const ranking = JSON.parse(waited.stdout);
    expect(ranking).toMatchObject({ group, key: "bon-1" });
    const arms = ranking.arms as {
      rank: number;
      arm: number;
      task: string;
      model: string;
      green: boolean;
      exit_code: number;
      cost_micro_usd: number;
      seconds: number;
      gates: { command: string; exit_code: number | null; tail: string }[] | null;
    }[];
    expect(arms.map((a) => a.rank)).toEqual([1, 2, 3]);
    expect(
      arms
        .slice(0, 2)
        .map((a) => a.arm)
        .sort(),
    ).toEqual([1, 3]);
    expect(arms.slice(0, 2).every((a) => a.green && a.model === "alpha" && a.exit_code === 0)).toBe(true);
    // Same cost: the faster first (bon's rule), the arm number last.
    expect(arms[0]!.cost_micro_usd).toBe(arms[1]!.cost_micro_usd);
    expect(arms[0]!.seconds).toBeLessThanOrEqual(arms[1]!.seconds);
    expect(arms[0]!.gates!.map((g) => g.exit_code)).toEqual([0, 0]);
    expect(arms[0]!.gates![1]!.tail).toContain("gate-ok");
    expect(JSON.stringify(ranking)).not.toContain(secret);
    expect(arms[2]).toMatchObject({ rank: 3, arm: 2, model: "beta", green: false, exit_code: 0 });
    // The first red gate ends the arm's gates: the second never ran.
    expect(arms[2]!.gates!.map((g) => g.exit_code)).toEqual([1]);
    expect(ranking.winner).toMatchObject({ arm: arms[0]!.arm, task: arms[0]!.task, model: "alpha" });

    // Counted by the agent: each arm's task ran exactly once.
    expect(
      agentRuns(f)
        .map((r) => `${r.task}-${r.attempt}`)
        .sort(),
    ).toEqual(arms.map((a) => `${a.task}-1`).sort());
    expect(new Set(agentRuns(f).map((r) => r.host))).toEqual(new Set(["a", "b"]));

    // Each arm from the same code: one commit for all.
    const done = lines((await agentport(["tasks", "--json"], { env: f.env })).stdout).map((l) => JSON.parse(l));
    expect(new Set(done.map((t) => t.commit)).size).toBe(1);
    expect(done[0].commit).toMatch(/^[0-9a-f]{40}$/);

    const text = await agentport(["results", group], { env: f.env });
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^rank\s+arm\s+task\s+model\s+verdict\s+gates/);
    expect(lines(text.stdout)).toHaveLength(5);
    expect(text.stdout).toContain(`winner: arm ${ranking.winner.arm}; its patch: agentport results ${ranking.winner.task} --patch`);
    expect(JSON.parse((await agentport(["results", group, "--json"], { env: f.env })).stdout)).toEqual(ranking);
    // A group is named alone: among task ids it is refused, exit 2.
    const mixed = await agentport(["wait", arms[0]!.task, group], { env: f.env });
    expect(mixed.code).toBe(2);
    expect(mixed.stderr).toContain(`${group} is a group of arms: give it alone`);
    expect(await Promise.all(workers.map((w) => w.exited))).toEqual([0, 0]);
  }, 150_000);

  test("a group with no green arm: wait and results exit 1, no winner", async () => {
    const f = await fleet([]);
    const group = await submit(f, ["--arms", "2", "--gate", "false", "nothing passes"]);
    const w = worker(f, host(f, "w"), ["--concurrency", "2"]);
    const waited = await agentport(["wait", group, "--timeout", "60", "--json"], { env: f.env });
    w.kill("SIGTERM");
    expect(waited.code).toBe(1);
    const ranking = JSON.parse(waited.stdout);
    expect(ranking.winner).toBeNull();
    const arms = ranking.arms as { arm: number; green: boolean; seconds: number; reason: string }[];
    expect(arms.map((a) => a.arm).sort()).toEqual([1, 2]);
    expect(arms.map((a) => [a.green, a.reason])).toEqual(Array(2).fill([false, "gate `false` exited 1"]));
    // Red arms are ranked by the same rule: same cost, the faster first.
    expect(arms[0]!.seconds).toBeLessThanOrEqual(arms[1]!.seconds);
    expect((await agentport(["results", group], { env: f.env })).code).toBe(1);
    expect(agentRuns(f)).toHaveLength(2);
    await w.exited;
  }, 120_000);

  test("bad arms flags are refused at submit with one line, exit 2, nothing queued; concurrent submits with one key are one group", async () => {
    const f = await fleet([]);
    const refusals: [string[], string][] = [
      [["--gate", "true", "x"], "--gate needs --arms"],
      [["--models", "a,b", "x"], "--models needs --arms"],
      [["--arms", "1", "x"], "--arms"],
      [["--arms", "6", "x"], "--arms"],
      [["--arms", "two", "x"], "--arms"],
      [["--arms", "2", "--models", "a,b,c", "x"], "--models"],
      [["--arms", "2", "--model", "a", "--models", "b", "x"], "--model"],
      [["--arms", "2", "--gate", "", "x"], "--gate"],
      [["--arms", "2", "--resume", "some-task", "x"], "--resume"],
      [["--arms", "2", "--agent", "codex", "--max-turns", "3", "x"], "codex"],
    ];
    for (const [args, says] of refusals) {
      const done = await agentport(["submit", "--repo", f.repo, ...args], { env: f.env });
      expect({ args, code: done.code }).toEqual({ args, code: 2 });
      expect(lines(done.stderr)).toHaveLength(1);
      expect(done.stderr).toContain(says);
    }
    expect((await agentport(["tasks", "--json"], { env: f.env })).stdout.trim()).toBe("");
    // 8 concurrent arms submits with one key: one group, its 2 arms queued once.
    const groups = await Promise.all(Array.from({ length: 8 }, (_, i) => submit(f, ["--arms", "2", "--key", "same", `try ${i}`])));
    expect(new Set(groups).size).toBe(1);
    const queued = lines((await agentport(["tasks", "--json"], { env: f.env })).stdout).map((l) => JSON.parse(l));
    expect(queued.map((t) => [t.group_id, t.arm])).toEqual([
      [groups[0], 1],
      [groups[0], 2],
    ]);
  }, 60_000);
});
