// `submit --resume TASK` through the compiled binary on a real PostgreSQL:
// the resume is claimed only by a worker on the session's birth host whose
// workspaces hold its birth folder; elsewhere it waits (and `tasks` says
// why) with no agent started anywhere. Counted from the fake claude's log.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { agentport } from "./helpers.ts";
import { usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, lines, submit, task, worker } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet-resume.test.ts");

describe.skipIf(skip)("submit --resume", () => {
  test("goes to the birth host and folder only: another host's worker never claims it, the birth host's resumes the same session there", async () => {
    const f = await fleet([]);
    const first = await submit(f, ["start it"]);
    expect(await worker(f, host(f, "a"), ["--once"]).exited).toBe(0);
    const born = await task(f, first);
    expect(born).toMatchObject({ state: "done", exit_code: 0 });
    const session: string = born.verdict.session_id;
    const other = worker(f, host(f, "b"));
    const again = await agentport(["submit", "--resume", first, "--json", "carry on"], { env: f.env });
    expect(again).toMatchObject({ code: 0, stderr: "" });
    const resumed = JSON.parse(again.stdout);
    expect(resumed).toMatchObject({
      state: "queued",
      resume_session: session,
      birth_machine: "a-machine",
      request: { agent: "claude" },
      repo: f.repo,
    });
    expect(resumed.birth_folder).toEndWith(`/a/fleet/workspaces/${first}-1`);
    // Host b is live and idle, yet never claims it: it waits, and says why.
    await Bun.sleep(2_000);
    const waiting = await task(f, resumed.id);
    expect(waiting).toMatchObject({ state: "queued", attempt: 0 });
    expect(waiting.waiting).toContain(`its session was born on host`);
    expect(waiting.waiting).toContain(`(a-machin) in ${resumed.birth_folder}`);
    expect(agentRuns(f)).toHaveLength(1);
    // The birth host's worker takes it and resumes the session in its birth folder.
    expect(await worker(f, host(f, "a"), ["--once"]).exited).toBe(0);
    expect(await task(f, resumed.id)).toMatchObject({
      state: "done",
      exit_code: 0,
      attempt: 1,
      runs: 1,
      verdict: { session_id: session, status: "completed" },
    });
    const log = lines(readFileSync(f.log, "utf8"))
      .map((l) => JSON.parse(l) as { argv: string[]; cwd: string })
      .filter((r) => !r.argv.includes("--version"));
    expect(log).toHaveLength(2);
    expect(log.map((r) => r.cwd)).toEqual([resumed.birth_folder, resumed.birth_folder]);
    expect(log[1]!.argv).toContain("--resume");
    expect(log[1]!.argv).toContain(session);
    other.kill("SIGTERM");
    expect(await other.exited).toBe(0);
    expect(agentRuns(f).map((r) => r.task)).toEqual([first, first]);
  }, 90_000);

  test("--resume of a task not finished, or with --repo / --agent, is exit 2, one line, nothing queued", async () => {
    const f = await fleet([]);
    const open = await submit(f, ["still queued"]);
    for (const args of [
      ["--resume", open],
      ["--resume", open, "--repo", f.repo],
      ["--resume", open, "--agent", "pi"],
    ]) {
      const ran = await agentport(["submit", ...args, "more"], { env: f.env });
      expect(ran.code).toBe(2);
      expect(lines(ran.stderr)).toHaveLength(1);
    }
    expect(lines((await agentport(["tasks"], { env: f.env })).stdout)).toHaveLength(1);
  }, 60_000);
});
