// `agentport follow` from another process: on a running session it prints the
// progress as it comes and returns with the phase's exit code when it ends;
// on a finished one it prints what was kept and returns; an unknown id is exit 2.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { agentport, BIN, fakeProject, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const SLOW = JSON.stringify({
  steps: [
    { text: "one" },
    { sleep: 700 },
    { tool: { name: "Read", input: { file_path: "a.txt" }, result: "x" } },
    { sleep: 700 },
    { text: "done" },
    { result: { text: "done" } },
  ],
});

/** The id of the session once the ledger has it. */
async function sessionOf(w: FakeProject): Promise<string> {
  const path = join(w.env.AGENTPORT_HOME!, "ledger.sqlite");
  for (let i = 0; i < 200; i++) {
    try {
      const db = new Database(path, { readonly: true });
      const row = db.query<{ id: string }, []>("SELECT id FROM sessions LIMIT 1").get();
      db.close();
      if (row) return row.id;
    } catch {
      // not there yet
    }
    await Bun.sleep(25);
  }
  throw new Error("no session in the ledger");
}

test("follow a running session: its progress live, then its final line and exit code; then again once finished", async () => {
  const w = fakeProject("agentport-follow-");
  made.push(w.root);
  const runner = Bun.spawn([BIN, "run", "--agent", "claude", "--progress", "off", "go slowly"], {
    cwd: w.proj,
    env: { ...process.env, ...w.env, NO_COLOR: "1", AGENTPORT_FAKE_SCENARIO: SLOW },
    stdout: "pipe",
    stderr: "pipe",
  });
  const id = await sessionOf(w);
  const followed = await agentport(["follow", id.slice(0, 8)], { cwd: w.proj, env: w.env });
  // follow returned by itself, and not before the run's end.
  expect(
    runner.exitCode === null ? await Promise.race([runner.exited, Bun.sleep(2000).then(() => "still running")]) : runner.exitCode,
  ).toBe(0);
  expect(followed.code).toBe(0);
  const lines = followed.stdout.trim().split("\n");
  expect(lines).toContain("claude: tool Read a.txt");
  expect(lines.at(-1)).toBe("claude: completed · $0.0123 · 3000 in / 42 out · exit 0");
  const again = await agentport(["follow", "--json", id], { cwd: w.proj, env: w.env });
  expect(again.code).toBe(0);
  const records = again.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  expect(records.at(-1)).toMatchObject({ kind: "verdict", session_id: id, status: "completed", exit_code: 0 });
  expect(records.some((r) => r.kind === "tool_started" && r.tool === "Read")).toBe(true);
  const unknown = await agentport(["follow", "ffffffff"], { cwd: w.proj, env: w.env });
  expect(unknown.code).toBe(2);
});
