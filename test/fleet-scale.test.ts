// 3 hosts × 2 workers and 60 tasks from a local bare repository (file://),
// at three refs, through the compiled binary on a real PostgreSQL: every task
// exactly one result, run on its own ref's commit, and exactly one agent run
// per task counted from the fake claude's own log — with one worker killed
// (kill -9) mid-run and its task retried.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { agentport } from "./helpers.ts";
import { usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, lines, liveAgents, submit, until, worker } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet-scale.test.ts");

describe.skipIf(skip)("a fleet of 3 hosts × 2 workers", () => {
  test("60 tasks: each one result on its ref's commit, one agent run each (the killed worker's task twice: attempts 1 and 2), no agent left", async () => {
    const f = await fleet([{ sleep: 300 }]);
    const src = join(f.root, "src");
    const git = (args: string[]) =>
      Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: src, stdout: "pipe" })
        .stdout.toString()
        .trim();
    const commits: string[] = [];
    for (const n of [1, 2, 3]) {
      git(["commit", "-q", "--allow-empty", "-m", `ref ${n}`]);
      git(["tag", `r${n}`]);
      commits.push(git(["rev-parse", "HEAD"]));
    }
    git(["push", "-q", "--tags", join(f.root, "repo.git")]);
    const ids = await Promise.all(
      Array.from({ length: 60 }, (_, i) => submit(f, ["--ref", `r${(i % 3) + 1}`, "--retries", "1", `task ${i}`])),
    );
    // A 6 s lease: 6 workers and their runs on a loaded 2-core box may miss a 1.5 s lease's grace.
    const workers = ["a", "b", "c"].flatMap((h) => [
      worker(f, { ...host(f, h), AGENTPORT_LEASE_MS: "6000" }),
      worker(f, { ...host(f, h), AGENTPORT_LEASE_MS: "6000" }),
    ]);
    // One worker dies mid-run: its agent goes with it, its task is run again elsewhere.
    await until("a first agent", () => agentRuns(f).length > 0);
    workers[0]!.kill("SIGKILL");
    const waited = await agentport(["wait", ...ids, "--timeout", "240", "--json"], { env: f.env });
    expect(waited.stderr).toBe("");
    expect(waited.code).toBe(0);
    const tasks = lines(waited.stdout).map((l) => JSON.parse(l));
    expect(tasks).toHaveLength(60);
    for (const [i, t] of tasks.entries()) {
      expect(t).toMatchObject({ id: ids[i], state: "done", exit_code: 0, commit: commits[i % 3], verdict: { status: "completed" } });
    }
    for (const w of workers.slice(1)) w.kill("SIGTERM");
    const exits = await Promise.all(workers.slice(1).map((w) => w.exited));
    const said = (await Promise.all(workers.map((w) => new Response(w.stderr).text()))).join("");
    // Counted by the agents: every task ran; a task that ran twice is the killed worker's (attempt 1 then 2), and the stored verdict is its last run's session.
    const runs = agentRuns(f);
    const byTask = Map.groupBy(runs, (r) => r.task);
    const twice = [...byTask.entries()].filter(([, r]) => r.length > 1).map(([id, r]) => ({ id, attempts: r.map((x) => x.attempt) }));
    const facts = {
      exits,
      live: liveAgents(f),
      twice: twice.length <= 1,
      stops: said.split("\n").filter((l) => /lease lost|no lease renewal/.test(l)),
    };
    if (JSON.stringify(facts) !== JSON.stringify({ exits: [0, 0, 0, 0, 0], live: [], twice: true, stops: [] }))
      console.error(JSON.stringify(twice), said);
    expect(facts).toEqual({ exits: [0, 0, 0, 0, 0], live: [], twice: true, stops: [] });
    expect([...byTask.keys()].sort()).toEqual([...ids].sort());
    for (const t of twice) expect(t.attempts).toEqual([1, 2]);
    for (const t of tasks) expect(t.verdict.session_id).toBe(byTask.get(t.id)!.at(-1)!.session);
    expect(runs.length).toBe(60 + twice.length);
  }, 300_000);
});
