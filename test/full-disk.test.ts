// A full disk loses nothing that matters: with the state folder on a small
// tmpfs that fills while the agent works, the verdict still reaches stdout,
// the error is one line (exit 5), and the next command that can write records
// the phase's finish. Needs root (to mount the tmpfs): skipped otherwise.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, BIN, fakeProject } from "./helpers.ts";

const mounts: string[] = [];

function mountTmpfs(dir: string, size: string): boolean {
  mkdirSync(dir, { recursive: true });
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", dir], { stdout: "ignore", stderr: "ignore" });
  if (mounted.exitCode === 0) mounts.push(dir);
  return mounted.exitCode === 0;
}

afterAll(() => {
  for (const dir of mounts) Bun.spawnSync(["umount", "-l", dir]);
});

/** Write zeros until the device says ENOSPC. */
function fill(path: string): void {
  const block = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeFileSync(path, block, { flag: "a" });
  } catch (error) {
    expect((error as NodeJS.ErrnoException).code).toBe("ENOSPC");
  }
}

function openPhases(ledger: string): { status: string | null; ended_at: string | null; details: string | null }[] {
  const db = new Database(ledger, { readonly: true });
  try {
    return db
      .query<{ status: string | null; ended_at: string | null; details: string | null }, []>(
        `SELECT status, ended_at, details FROM phases ORDER BY id`,
      )
      .all();
  } finally {
    db.close();
  }
}

const root = process.getuid?.() === 0;

describe.skipIf(!root)("a full disk", () => {
  test("the ledger cannot take the finish: the verdict on stdout, one line, exit 5; the next command records it", async () => {
    const p = fakeProject("agentport-full-");
    const state = join(p.root, "state");
    if (!mountTmpfs(state, "3m")) {
      console.warn("full-disk test skipped: cannot mount a tmpfs here");
      return;
    }
    const ledger = join(state, "ledger.sqlite");
    const started = join(p.root, "started");
    // The agent says it has started (a grandchild's pid file), then works while the test fills the disk.
    const scenario = JSON.stringify({
      steps: [{ text: "working" }, { grandchild: started }, { sleep: 1500 }, { text: "done" }, { result: {} }],
    });
    const run = Bun.spawn([BIN, "run", "--agent", "claude", "--json", "--progress", "off", "work"], {
      cwd: p.proj,
      env: { ...process.env, ...p.env, NO_COLOR: "1", AGENTPORT_FAKE_SCENARIO: scenario },
      stdout: "pipe",
      stderr: "pipe",
    });
    const until = performance.now() + 30_000;
    while (!existsSync(started) && performance.now() < until) await Bun.sleep(20);
    fill(join(state, "filler"));
    const [stdout, stderr, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
    expect(JSON.parse(stdout)).toMatchObject({ status: "completed", ok: true, text: "done" });
    expect(code).toBe(5);
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("could not record the finish");
    expect(openPhases(ledger)).toEqual([{ status: null, ended_at: null, details: null }]);
    // Room again: the next command records the finish as it was.
    rmSync(join(state, "filler"));
    const listed = await agentport(["sessions", "--json"], { cwd: p.proj, env: p.env });
    expect(listed.code).toBe(0);
    const [phase] = openPhases(ledger);
    expect(phase).toMatchObject({ status: "completed", ended_at: expect.any(String) });
    expect(JSON.parse(phase!.details!)).toMatchObject({ recorded_late: true });
  }, 60_000);

  test("stdout into a file on a full disk: exit 5 and one line, the phase finished", async () => {
    const p = fakeProject("agentport-full-");
    const out = join(p.root, "out");
    if (!mountTmpfs(out, "1m")) {
      console.warn("full-disk test skipped: cannot mount a tmpfs here");
      return;
    }
    fill(join(out, "filler"));
    const proc = Bun.spawn(["sh", "-c", `"$AP" run --agent claude --json --progress off hi > "$OUT/verdict.json"`], {
      cwd: p.proj,
      env: { ...process.env, ...p.env, NO_COLOR: "1", AP: BIN, OUT: out, AGENTPORT_FAKE_SCENARIO: "text" },
      stdout: "ignore",
      stderr: "pipe",
    });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(5);
    expect(stderr.trim().split("\n")).toEqual([expect.stringContaining("cannot write the result to stdout: ENOSPC")]);
    expect(openPhases(join(p.env.AGENTPORT_HOME!, "ledger.sqlite"))).toEqual([
      { status: "completed", ended_at: expect.any(String), details: null },
    ]);
  });
});
