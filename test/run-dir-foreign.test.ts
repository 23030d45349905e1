// A run folder is always under the home's runs folder (issue 24, low): an
// imported row may name any folder as a phase's run_dir (/etc, another user's
// files, a symlink planted in <home>/runs); `follow` and `replay ID` refuse
// it in one line (exit 2) and read nothing there.
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportedPhase, exportedSession } from "./exported-row.ts";
import { agentport, fakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function importedWithRunDir(runDir: (home: string, elsewhere: string) => string) {
  const w = fakeProject("agentport-run-dir-");
  made.push(w.root);
  const home = w.env.AGENTPORT_HOME!;
  const elsewhere = join(w.root, "elsewhere");
  mkdirSync(elsewhere);
  writeFileSync(
    join(elsewhere, "progress.ndjson"),
    `${JSON.stringify({ kind: "verdict", agent: "claude", status: "completed", exit_code: 0, secret: "READ-FROM-ELSEWHERE" })}\n`,
  );
  writeFileSync(
    join(elsewhere, "stream.jsonl"),
    `${JSON.stringify({ type: "result", subtype: "success", result: "READ-FROM-ELSEWHERE", session_id: "x" })}\n`,
  );
  const dir = runDir(home, elsewhere);
  const id = `foreign-${crypto.randomUUID()}`;
  const row = exportedSession({ id, cwd: w.proj, phases: [exportedPhase({ run_dir: dir })] });
  const file = join(w.root, "export.ndjson");
  writeFileSync(file, `${JSON.stringify(row)}\n`);
  return { w, id, file, dir };
}

test.each([
  ["a folder outside the home", (_home: string, elsewhere: string) => elsewhere],
  [
    "a symlink in <home>/runs to a folder outside",
    (home: string, elsewhere: string) => {
      mkdirSync(join(home, "runs"), { recursive: true });
      symlinkSync(elsewhere, join(home, "runs", "20261130T100001-planted"));
      return join(home, "runs", "20261130T100001-planted");
    },
  ],
])("an imported run_dir naming %s: follow and replay ID refuse it in one line, read nothing", async (_name, runDir) => {
  const { w, id, file, dir } = importedWithRunDir(runDir);
  expect((await agentport(["import", file], { cwd: w.proj, env: w.env })).code).toBe(0);
  for (const args of [
    ["follow", id],
    ["replay", id, "--json"],
  ]) {
    const ran = await agentport(args, { cwd: w.proj, env: w.env });
    expect(ran.code).toBe(2);
    const lines = ran.stderr.split("\n").filter((l) => l.trim() !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`its run folder ${dir} is not inside`);
    expect(ran.stdout + ran.stderr).not.toContain("READ-FROM-ELSEWHERE");
  }
});
