// Where a task's code comes from, through the compiled binary on a real
// PostgreSQL: --repo at a --ref, --bundle FILE and --here (this repository's
// HEAD, a commit the remote never saw) each stored with the task; the worker
// checks it out and its agent runs on exactly that commit (the task records
// the workspace's HEAD when the agent started; the fake's log, that it ran).
import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, tempDir } from "./helpers.ts";
import { problems } from "./schemas.ts";
import { usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, lines, submit, task, worker, type Fleet } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet-code.test.ts");

function git(f: Fleet, args: string[], cwd = join(f.root, "src")): string {
  const done = Bun.spawnSync(["git", "-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  expect(done.exitCode).toBe(0);
  return done.stdout.toString().trim();
}

describe.skipIf(skip)("the task's code", () => {
  test("--here ships HEAD (a commit not pushed anywhere), --bundle FILE a bundle at --ref, --repo a URL at --ref: each attempt runs on that commit", async () => {
    const f = await fleet([]);
    const pushed = git(f, ["rev-parse", "HEAD"]);
    writeFileSync(join(f.root, "src", "local.txt"), "only here\n");
    git(f, ["add", "."]);
    git(f, ["commit", "-qm", "local only"]);
    const local = git(f, ["rev-parse", "HEAD"]);
    const here = await agentport(["submit", "--here", "--json", "from here"], { cwd: join(f.root, "src"), env: f.env });
    expect(here).toMatchObject({ code: 0, stderr: "" });
    const hereTask = JSON.parse(here.stdout);
    expect(hereTask.repo).toBe(`here:${join(f.root, "src")}@${local}`);
    expect(hereTask.bundle_bytes).toBeGreaterThan(0);
    git(f, ["branch", "feature", pushed]);
    const file = join(f.root, "feature.bundle");
    git(f, ["bundle", "create", "--quiet", file, "feature"]);
    const bundled = (await agentport(["submit", "--bundle", file, "--ref", "feature", "from a bundle"], { env: f.env })).stdout.trim();
    const atRef = await submit(f, ["--ref", pushed, "from the repo"]);
    expect(await worker(f, host(f, "w"), ["--concurrency", "3", "--once"]).exited).toBe(0);
    for (const id of [hereTask.id, bundled, atRef])
      if ((await task(f, id)).state !== "done") expect(await worker(f, host(f, "w"), ["--once"]).exited).toBe(0);
    expect(await task(f, hereTask.id)).toMatchObject({ state: "done", exit_code: 0, commit: local });
    expect(await task(f, bundled)).toMatchObject({ state: "done", exit_code: 0, commit: pushed, repo: `bundle:${file}` });
    expect(await task(f, atRef)).toMatchObject({ state: "done", exit_code: 0, commit: pushed, bundle_bytes: null });
    expect(
      agentRuns(f)
        .map((r) => r.task)
        .sort(),
    ).toEqual([hereTask.id, bundled, atRef].sort());
  }, 90_000);

  test("results --patch: the workspace's changes after the run (a new file and an edit), stored with the task, apply to a fresh clone; --stream: the run's stream; --verdict: its verdict; a queued task's is exit 2", async () => {
    const f = await fleet([{ tool: { name: "Bash", input: { command: "edit" }, run: "echo new > added.txt && echo more >> README" } }]);
    const id = await submit(f, ["edit it"]);
    const queued = await submit(f, ["--key", "later", "later"]);
    expect(await worker(f, host(f, "w"), ["--once"]).exited).toBe(0);
    const done = await task(f, id);
    expect(done).toMatchObject({ state: "done", exit_code: 0, patch_stored: true });
    expect(done.patch_bytes).toBeGreaterThan(0);
    const patch = await agentport(["results", id, "--patch"], { env: f.env });
    expect(patch).toMatchObject({ code: 0, stderr: "" });
    expect(patch.stdout).toContain("b/added.txt");
    expect(patch.stdout).toContain("+more");
    expect(Buffer.byteLength(patch.stdout)).toBe(done.patch_bytes);
    const fresh = join(f.root, "fresh");
    git(f, ["clone", "-q", f.repo, fresh], f.root);
    writeFileSync(join(f.root, "p.diff"), patch.stdout);
    git(f, ["apply", join(f.root, "p.diff")], fresh);
    expect(await Bun.file(join(fresh, "added.txt")).text()).toBe("new\n");
    // The run's stream, from its run folder on the worker's box, readable from any other.
    const stream = await agentport(["results", id, "--stream"], { env: f.env });
    expect(stream).toMatchObject({ code: 0, stderr: "" });
    const records = lines(stream.stdout).map((l) => JSON.parse(l));
    expect(Buffer.byteLength(stream.stdout)).toBe(done.stream_bytes);
    expect(records.some((r) => r.type === "result" && r.session_id === done.verdict.session_id)).toBe(true);
    expect(stream.stdout).toContain(`"name":"Bash","input":{"command":"edit"}`);
    // --verdict: the run's verdict as `run --json` printed it, under the published schema, with run's exit code.
    const verdict = await agentport(["results", id, "--verdict"], { env: f.env });
    expect(verdict).toMatchObject({ code: 0, stderr: "" });
    expect(JSON.parse(verdict.stdout)).toEqual(done.verdict);
    expect(problems("verdict", JSON.parse(verdict.stdout))).toEqual([]);
    expect((await agentport(["results", queued, "--verdict"], { env: f.env })).code).toBe(2);
    expect((await agentport(["results", id, "--verdict", "--patch"], { env: f.env })).code).toBe(2);
    expect((await agentport(["results", id, "--patch", "--stream"], { env: f.env })).code).toBe(2);
    const early = await agentport(["results", queued, "--patch"], { env: f.env });
    expect(early.code).toBe(2);
    expect(lines(early.stderr)).toHaveLength(1);
    expect((await agentport(["results", "--patch"], { env: f.env })).code).toBe(2);
  }, 60_000);

  test("bad code flags: exit 2, one line, nothing queued", async () => {
    const f = await fleet([]);
    const notBundle = join(f.root, "not.bundle");
    writeFileSync(notBundle, "hello\n");
    const outside = tempDir("agentport-fleet-nogit-");
    const bad: [string[], string, RegExp][] = [
      [["x"], f.root, /no code: give --repo URL/],
      [["--here", "x"], outside, /--here: this folder is not in a git repository/],
      [["--here", "--ref", "main", "x"], join(f.root, "src"), /--here ships HEAD/],
      [["--here", "--repo", f.repo, "x"], join(f.root, "src"), /give only one of --repo, --here/],
      [["--bundle", notBundle, "x"], f.root, /is not a git bundle/],
      [["--bundle", join(f.root, "missing.bundle"), "x"], f.root, /cannot be read \(ENOENT\)/],
    ];
    for (const [args, cwd, said] of bad) {
      const ran = await agentport(["submit", ...args], { cwd, env: f.env });
      expect({ args, code: ran.code }).toEqual({ args, code: 2 });
      expect(lines(ran.stderr)).toHaveLength(1);
      expect(ran.stderr).toMatch(said);
    }
    expect((await agentport(["tasks"], { env: f.env })).stdout).toBe("");
  }, 60_000);
});
