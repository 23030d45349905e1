// `agentport sessions` for a person: a header row, UTC times with Z, a note
// when --limit cuts, and an empty ledger that says so.
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { agentport, fakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

test("sessions: empty says so; a header, Z times, and how many more when --limit cuts", async () => {
  const w = fakeProject("agentport-listing-");
  made.push(w.root);
  const empty = await agentport(["sessions"], { cwd: w.proj, env: w.env });
  expect(empty.code).toBe(0);
  expect(empty.stdout).toBe("");
  expect(empty.stderr).toContain("no sessions yet");
  for (let i = 0; i < 3; i++) expect((await agentport(["run", "--agent", "claude", "-q", "hi"], { cwd: w.proj, env: w.env })).code).toBe(0);
  const cut = await agentport(["sessions", "--limit", "2"], { cwd: w.proj, env: w.env });
  const lines = cut.stdout.trim().split("\n");
  expect(lines).toHaveLength(3);
  expect(lines[0]).toMatch(/^SESSION +AGENT +STATUS +PHS +COST +TOKENS I\/O +DECLARED \(UTC\) +FOLDER$/);
  for (const line of lines.slice(1)) expect(line).toMatch(/ \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ  \//);
  expect(cut.stderr).toContain("… 1 more (use --limit)");
  const all = await agentport(["sessions"], { cwd: w.proj, env: w.env });
  expect(all.stdout.trim().split("\n")).toHaveLength(4);
  expect(all.stderr).not.toContain("more");
  const none = await agentport(["sessions", "--agent", "pi"], { cwd: w.proj, env: w.env });
  expect(none.stderr).toContain("no sessions in the ledger");
});
