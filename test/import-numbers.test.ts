// Imported numbers cannot break a ledger (issue 24, item 10), through the
// compiled binary on SQLite and a real PostgreSQL: `seconds: 1e308` summed in
// PostgreSQL overflowed (22003) and `sessions`, `sessions --json` and `ledger
// copy` died with a stack trace. Every imported number is bounded by what its
// column and its sums hold: a line beyond a bound is refused (one line, exit 2,
// nothing imported); numbers at the bounds list, export and copy.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportedPhase, exportedSession } from "./exported-row.ts";
import { agentport, tempDir } from "./helpers.ts";
import { postgres, usePostgres } from "./pg.ts";

const skipPostgres = usePostgres("test/import-numbers.test.ts");
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const MAX_SECONDS = 1e9;
const BIG = Number.MAX_SAFE_INTEGER;

const session = (id: string, phases: Record<string, unknown>[]) => exportedSession({ id, agent: "pi", cwd: "/tmp/p", phases });
const phase = (seq: number, numbers: Record<string, number>) =>
  exportedPhase({
    seq,
    started_at: `2026-11-30T10:00:${String(seq % 60).padStart(2, "0")}.${seq}Z`,
    ended_at: "2026-11-30T11:00:00.000Z",
    ...numbers,
  });

const engines: [string, boolean, () => Promise<string[]>][] = [
  ["SQLite", false, async () => []],
  ["PostgreSQL", skipPostgres, async () => ["--ledger", await (await postgres()).fresh()]],
];

describe.each(engines)("%s", (_engine, skip, ledger) => {
  test.skipIf(skip).each([
    ["seconds: 1e308", { seconds: 1e308 }, "phases[1].seconds"],
    ["seconds one past the bound", { seconds: MAX_SECONDS + 1 }, "phases[1].seconds"],
  ])("%s is refused: one line naming it, exit 2, nothing imported", async (_name, numbers, path) => {
    const root = tempDir("agentport-import-numbers-");
    made.push(root);
    const env = { AGENTPORT_HOME: join(root, "state"), AGENTPORT_CONFIG: "" };
    const where = await ledger();
    const file = join(root, "in.ndjson");
    writeFileSync(
      file,
      `${JSON.stringify(session("ok-first", [phase(1, {})]))}\n${JSON.stringify(session("overflowing", [phase(1, {}), phase(2, numbers)]))}\n`,
    );
    const ran = await agentport(["import", file, ...where], { cwd: root, env });
    expect(ran.code).toBe(2);
    const lines = ran.stderr.split("\n").filter((l) => l.trim() !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`line 2: ${path}`);
    expect(ran.stderr).not.toContain("    at ");
    const listed = await agentport(["sessions", "--json", ...where], { cwd: root, env });
    expect(listed.code).toBe(0);
    expect(listed.stdout.trim()).toBe("");
  });

  test.skipIf(skip)("numbers at their bounds, summed over many phases: sessions, sessions --json and ledger copy work", async () => {
    const root = tempDir("agentport-import-numbers-");
    made.push(root);
    const env = { AGENTPORT_HOME: join(root, "state"), AGENTPORT_CONFIG: "" };
    const where = await ledger();
    const at = {
      seconds: MAX_SECONDS,
      tokens_in: BIG,
      tokens_out: BIG,
      tokens_cache_read: BIG,
      tokens_cache_write: BIG,
      cost_micro_usd: BIG,
    };
    const file = join(root, "in.ndjson");
    writeFileSync(
      file,
      `${JSON.stringify(
        session(
          "at-the-bounds",
          Array.from({ length: 300 }, (_, i) => phase(i + 1, at)),
        ),
      )}\n`,
    );
    expect((await agentport(["import", file, ...where], { cwd: root, env })).code).toBe(0);
    for (const args of [
      ["sessions"],
      ["sessions", "--json"],
      ["show", "at-the-bounds"],
      ["ledger", "copy", "--to", `sqlite:${join(root, "copy.sqlite")}`],
    ]) {
      const ran = await agentport([...args, ...where], { cwd: root, env });
      expect(ran.stderr).not.toContain("    at ");
      expect(ran.code).toBe(0);
    }
    const json = await agentport(["sessions", "--json", ...where], { cwd: root, env });
    expect(JSON.parse(json.stdout).totals.seconds).toBe(300 * MAX_SECONDS);
  });
});

test.skipIf(skipPostgres)(
  "a PostgreSQL ledger that holds 1e308 seconds from before the bound: sessions, sessions --json and ledger copy still work",
  async () => {
    const root = tempDir("agentport-import-numbers-");
    made.push(root);
    const env = { AGENTPORT_HOME: join(root, "state"), AGENTPORT_CONFIG: "" };
    const url = await (await postgres()).fresh();
    const file = join(root, "in.ndjson");
    writeFileSync(file, `${JSON.stringify(session("stored-before", [phase(1, {}), phase(2, {})]))}\n`);
    expect((await agentport(["import", file, "--ledger", url], { cwd: root, env })).code).toBe(0);
    // As an import before the bound left it.
    const { SQL } = await import("bun");
    const sql = new SQL(url, { max: 1 });
    await sql.unsafe("UPDATE phases SET seconds = 1e308");
    await sql.close();
    for (const args of [["sessions"], ["sessions", "--json"], ["ledger", "copy", "--to", `sqlite:${join(root, "copy.sqlite")}`]]) {
      const ran = await agentport([...args, "--ledger", url], { cwd: root, env });
      expect(ran.stderr).not.toContain("22003");
      expect(ran.stderr).not.toContain("    at ");
      expect(ran.code).toBe(0);
    }
  },
);
