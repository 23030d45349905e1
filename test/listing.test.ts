// `agentport sessions` for a person: a header row, a note when --limit cuts,
// and an empty ledger that says so (test/sessions-listing.test.ts: the columns and filters).
import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { agentport, fakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

test("sessions: empty says so; a header, and how many more when --limit cuts", async () => {
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
  expect(lines[0]).toMatch(/^SESSION +AGE +AGENT +MODEL +STATUS +TOOK +COST +FIRST PROMPT$/);
  for (const line of lines.slice(1)) expect(line).toMatch(/^[0-9a-f]{8} +\d+s claude +claude-fake-1 +completed +\d+s +\$0\.0123 hi$/);
  expect(cut.stderr).toContain("… 1 more (use --limit or --offset)");
  const all = await agentport(["sessions"], { cwd: w.proj, env: w.env });
  expect(all.stdout.trim().split("\n")).toHaveLength(4);
  expect(all.stderr).not.toContain("more");
  const none = await agentport(["sessions", "--agent", "pi"], { cwd: w.proj, env: w.env });
  expect(none.stderr).toContain("no sessions in the ledger");
});

test("--help at COLUMNS=80: every row but the examples fits, wrapped at word boundaries under its description", async () => {
  for (const command of ["run", "sessions", "follow"]) {
    const help = await agentport([command, "--help"], { env: { COLUMNS: "80" } });
    expect(help.code).toBe(0);
    const [body] = help.stdout.split("\nEXAMPLES\n");
    const lines = body!.split("\n");
    expect(lines.every((l) => l.length <= 80)).toBe(true);
    expect(lines.some((l) => l.trimEnd() !== l)).toBe(false);
    // Every word of a description is still there, whole.
    expect(body!.replace(/\s+/g, " ")).toContain(
      command === "run"
        ? "Which agent to run (default: the named agent's, else claude)"
        : command === "sessions"
          ? "Only sessions born on this host: its hostname, or its machine id (or the start of it)"
          : "Session id or a unique prefix",
    );
  }
});
