// A worker runs each attempt's phase in its own process (issue #30: one
// process for many runs), through the compiled binary on a real PostgreSQL:
// its agents are its own children (no `agentport run` between), one keeper
// watches them all (a kill -9 of the worker leaves none), and a phase that
// throws is its own attempt's failure while the worker's other phases go on.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KEEPER_COMMAND } from "../src/io/keeper-command.ts";
import { agentport } from "./helpers.ts";
import { usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, liveAgents, submit, task, until, worker } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet-phase.test.ts");

const parentOf = (pid: number): number => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);

/** The processes whose parent is `pid`, by their argv. */
const childrenOf = (pid: number): string[][] =>
  readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p))
    .flatMap((p) => {
      try {
        return parentOf(Number(p)) === pid ? [readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").filter(Boolean)] : [];
      } catch {
        return [];
      }
    });

describe.skipIf(skip)("a worker's phases in its own process", () => {
  test("two phases at once: both agents are the worker's own children, watched by its one keeper; kill -9 of the worker leaves no agent", async () => {
    const f = await fleet([{ sleep: 8000 }]);
    const ids = await Promise.all([submit(f, ["one"]), submit(f, ["two"])]);
    const w = worker(f, host(f, "w"), ["--concurrency", "2"]);
    await until("both agents to start", () => liveAgents(f).length === 2);
    for (const agent of liveAgents(f)) expect(parentOf(agent)).toBe(w.pid);
    const children = childrenOf(w.pid);
    // No agentport between the worker and its agents: no `run` child, one keeper, the two agents.
    expect(children.filter((argv) => argv.includes("run") || argv.includes("resume"))).toEqual([]);
    expect(children.filter((argv) => argv.includes(KEEPER_COMMAND))).toHaveLength(1);
    expect(children.filter((argv) => argv[0]!.startsWith(join(f.root, "bin")))).toHaveLength(2);
    w.kill("SIGKILL");
    // The agents sleep 8 s: only the keeper ends them in time.
    await until("the dead worker's agents to go", () => liveAgents(f).length === 0, 4_000);
    const waited = await agentport(["wait", ...ids, "--timeout", "30", "--json"], { env: f.env });
    expect(
      waited.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).state),
    ).toEqual(["interrupted", "interrupted"]);
  }, 90_000);

  test("a drain past --drain-timeout stops the running phase through its abort signal: stored aborted (exit 130), its agent gone, the worker exits 0", async () => {
    const f = await fleet([{ sleep: 8000 }]);
    const id = await submit(f, ["long"]);
    const w = worker(f, host(f, "w"), ["--drain-timeout", "1"]);
    await until("the agent to start", () => liveAgents(f).length === 1);
    const drained = performance.now();
    w.kill("SIGTERM");
    expect(await w.exited).toBe(0);
    // Stopped after the drain timeout, long before the agent's 8 s.
    expect(performance.now() - drained).toBeLessThan(6_000);
    expect(liveAgents(f)).toEqual([]);
    expect(await task(f, id)).toMatchObject({
      state: "done",
      exit_code: 130,
      runs: 1,
      verdict: { status: "aborted", ok: false, failure: { kind: "stopped" } },
    });
    expect(agentRuns(f).map((r) => r.task)).toEqual([id]);
  }, 90_000);

  test("a resume (submit --resume) too: its agent is the birth host's worker's own child, on the same session, and the task ends done", async () => {
    const f = await fleet([{ sleep: 1500 }]);
    const first = await submit(f, ["start it"]);
    expect(await worker(f, host(f, "a"), ["--once"]).exited).toBe(0);
    const session: string = (await task(f, first)).verdict.session_id;
    const again = await agentport(["submit", "--resume", first, "carry on"], { env: f.env });
    expect(again).toMatchObject({ code: 0, stderr: "" });
    const w = worker(f, host(f, "a"), ["--once"]);
    await until("the resumed agent to start", () => liveAgents(f, session).length === 1);
    expect(parentOf(liveAgents(f, session)[0]!)).toBe(w.pid);
    expect(childrenOf(w.pid).filter((argv) => argv.includes("run") || argv.includes("resume"))).toEqual([]);
    expect(await w.exited).toBe(0);
    expect(await task(f, again.stdout.trim())).toMatchObject({
      state: "done",
      exit_code: 0,
      runs: 1,
      verdict: { session_id: session, status: "completed", ok: true },
    });
    expect(agentRuns(f).map((r) => r.task)).toEqual([first, first]);
  }, 90_000);

  test("a phase that throws (its workspace's agentport.json past its bound: a usage error on the worker) is its attempt's result, exit 2; the worker's other phase ends done and the worker claims the next", async () => {
    const f = await fleet([{ sleep: 1500 }]);
    const src = join(f.root, "src");
    const git = (args: string[]) =>
      expect(Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd: src }).exitCode).toBe(0);
    git(["checkout", "-q", "-b", "big"]);
    writeFileSync(join(src, "agentport.json"), `{"x":"${"a".repeat(2 * 1024 * 1024)}"}`);
    git(["add", "."]);
    git(["commit", "-qm", "big config"]);
    git(["push", "-q", join(f.root, "repo.git"), "big"]);
    const good = await submit(f, ["good"]);
    const bad = await submit(f, ["--ref", "big", "bad"]);
    const w = worker(f, host(f, "w"), ["--concurrency", "2"]);
    await until("both to end", async () => (await task(f, good)).state === "done" && (await task(f, bad)).state === "done", 30_000);
    const next = await submit(f, ["next"]);
    const waited = await agentport(["wait", good, bad, next, "--timeout", "30", "--json"], { env: f.env });
    w.kill("SIGTERM");
    const [code, said] = await Promise.all([w.exited, new Response(w.stderr).text()]);
    const [g, b, n] = waited.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(g).toMatchObject({ state: "done", exit_code: 0, verdict: { status: "completed", ok: true } });
    expect(n).toMatchObject({ state: "done", exit_code: 0, verdict: { status: "completed", ok: true } });
    expect(b).toMatchObject({ state: "done", exit_code: 2, verdict: { status: "failed", ok: false, failure: { kind: "usage" } } });
    expect(b.verdict.failure.message).toContain("agentport.json");
    expect(said).toContain(`task ${bad} attempt 1: exit 2 (`);
    expect(code).toBe(0);
    // Counted by the agents: the good and the next ran once each, the bad one never started one.
    expect(
      agentRuns(f)
        .map((r) => r.task)
        .sort(),
    ).toEqual([good, next].sort());
  }, 90_000);
});
