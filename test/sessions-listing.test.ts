// `agentport sessions` a person can read: 80 columns when stdout is no
// terminal (wider only when $COLUMNS says so), a title from the first prompt
// (redacted, cut), the model, status, duration, cost and age under a header of
// words; filters by status, agent, folder and age, and paging. --json keeps
// its meaning and gains the title.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";

let w: FakeProject;
let sub: string;
const ids: Record<string, string> = {};
const SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789";

const list = (args: string[], env: Record<string, string> = {}, cwd = w.proj) =>
  agentport(["sessions", ...args], { cwd, env: { ...w.env, COLUMNS: "", ...env } });
const rows = (stdout: string) => stdout.trimEnd().split("\n").slice(1);

beforeAll(async () => {
  w = fakeProject("agentport-sessions-");
  sub = join(w.proj, "sub");
  mkdirSync(sub);
  const start = async (name: string, args: string[], env: Record<string, string> = {}, cwd = w.proj) => {
    const ran = await agentport(["run", "--json", ...args], { cwd, env: { ...w.env, ...env } });
    ids[name] = (JSON.parse(ran.stdout) as { session_id: string }).session_id;
  };
  await start("long", [
    "--agent",
    "claude",
    `Fix the failing test in src/date.ts with the key ${SECRET} and then make the parser accept ISO week dates\nsecond line`,
  ]);
  await start("failed", ["--agent", "claude", "break it"], { AGENTPORT_FAKE_SCENARIO: "api-error" });
  await start("pi", ["--agent", "pi", "--model", "anthropic/claude-sonnet-4-5-20250929-with-a-long-name", "--direct", "hello pi"]);
  await start("sub", ["--agent", "claude", "in the sub folder"], {}, sub);
});
afterAll(() => rmSync(w.root, { recursive: true, force: true }));

describe("sessions for a person", () => {
  test("80 columns when stdout is no terminal: a header of words, the title redacted and cut", async () => {
    const ran = await list([]);
    expect(ran.code).toBe(0);
    const lines = ran.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^SESSION +AGE +AGENT +MODEL +STATUS +TOOK +COST +FIRST PROMPT$/);
    expect(lines).toHaveLength(5);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(ran.stdout).not.toContain(SECRET);
    expect(ran.stdout).not.toMatch(/PHS|TOKENS I\/O|\d+\/\d+\+/);
    // Newest first; the short id names the session; the cut is marked.
    const [sub, pi, failed, long] = rows(ran.stdout);
    expect(sub).toStartWith(`${ids.sub!.slice(0, 8)} `);
    expect(long).toMatch(/^\S{8} +\d+s claude +claude-fake-1 +completed +\d+s +\$0\.0123 Fix the failing t.*…$/);
    expect(failed).toMatch(/ failed +\d+s +\$\d\.\d{4} break it$/);
    expect(pi).toMatch(/ pi +anthropic\/\S*… +completed /);
  });

  test("a wider $COLUMNS gives the title and the model more room; the secret stays out", async () => {
    const ran = await list([], { COLUMNS: "160" });
    const long = rows(ran.stdout).find((l) => l.startsWith(ids.long!.slice(0, 8)))!;
    expect(long).toContain("Fix the failing test in src/date.ts with the key [redacted] and then make the p");
    expect(long).not.toContain("second line");
    expect(ran.stdout).toContain("anthropic/claude-sonnet-4-5-202…");
    for (const line of ran.stdout.trimEnd().split("\n")) expect(line.length).toBeLessThanOrEqual(160);
  });

  test("--status, --agent, --here, --cwd and --since filter; --limit and --offset page", async () => {
    expect(rows((await list(["--status", "failed"])).stdout).map((l) => l.slice(0, 8))).toEqual([ids.failed!.slice(0, 8)]);
    expect(rows((await list(["--agent", "pi"])).stdout)).toHaveLength(1);
    expect(rows((await list(["--here"], {}, sub)).stdout).map((l) => l.slice(0, 8))).toEqual([ids.sub!.slice(0, 8)]);
    expect(rows((await list(["--cwd", sub])).stdout)).toHaveLength(1);
    expect(rows((await list(["--since", "1h"])).stdout)).toHaveLength(4);
    const future = await list(["--since", "2999-01-01"]);
    expect(future.stdout).toBe("");
    expect(future.stderr).toContain("that match");
    const first = await list(["--limit", "2"]);
    expect(rows(first.stdout)).toHaveLength(2);
    expect(first.stderr).toContain("… 2 more (use --limit or --offset)");
    const second = await list(["--limit", "2", "--offset", "2"]);
    expect(rows(second.stdout).map((l) => l.slice(0, 8))).toEqual([ids.failed!.slice(0, 8), ids.long!.slice(0, 8)]);
    expect(second.stderr).not.toContain("more");
    // Filters with paging: the status is looked at before the page is cut.
    expect(rows((await list(["--status", "completed", "--limit", "1", "--offset", "1"])).stdout).map((l) => l.slice(0, 8))).toEqual([
      ids.pi!.slice(0, 8),
    ]);
  });

  test("a bad --status, --since or --offset: one line, exit 2", async () => {
    for (const [args, line] of [
      [["--status", "done"], /--status must be one of completed, failed, .*running, got "done"/],
      [["--since", "yesterday"], /--since must be an age \(2d, 12h, 90m\) or a date \(2026-11-30\), got "yesterday"/],
      [["--offset", "-1"], /--offset must be a positive integer/],
      [["--here", "--cwd", "/tmp"], /--here and --cwd both name a folder/],
    ] as [string[], RegExp][]) {
      const ran = await list(args);
      expect(ran.code).toBe(2);
      expect(ran.stdout).toBe("");
      expect(ran.stderr.trimEnd().split("\n")).toHaveLength(1);
      expect(ran.stderr).toMatch(line);
    }
  });

  test("--json: every session with its phases as before, the title added, the filters applied", async () => {
    const all = (await list(["--json"])).stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(all).toHaveLength(4);
    const long = all.find((s) => s.id === ids.long);
    expect(long.title).toBe("Fix the failing test in src/date.ts with the key [redacted] and then make the p…");
    expect(long).toMatchObject({
      agent: "claude",
      cwd: w.proj,
      phases: [expect.objectContaining({ seq: 1, status: "completed" })],
      totals: expect.objectContaining({ phase_count: 1 }),
    });
    expect(typeof long.request).toBe("string");
    const failed = (await list(["--json", "--status", "failed"])).stdout
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(failed.map((s) => s.id)).toEqual([ids.failed]);
  });
});
