// `agentport sessions --json` as an export and `agentport import` as its
// inverse: every row round-trips into an empty ledger, a second import changes
// nothing, a bad line names its number and nothing is written.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { AGENT_NAMES } from "../src/core/agents.ts";
import { connectLedger } from "../src/io/ledger.ts";
import { agentport, tempDir } from "./helpers.ts";
import { postgres, usePostgres } from "./pg.ts";

const skipPostgres = usePostgres("test/import.test.ts");
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function dir(): string {
  const root = realpathSync(tempDir("agentport-import-"));
  made.push(root);
  return root;
}

const tokens = (n: number) => ({ input: n, output: n + 1, cache_read: n + 2, cache_write: n + 3 });

/** A ledger with every kind of row: both agents, all columns, finished and running phases, details, many sessions. */
async function fill(home: string, project: string): Promise<string[]> {
  await using ledger = await connectLedger(home);
  const ids: string[] = [];
  const parent = await ledger.declareSession({
    agent: "pi",
    cwd: project,
    model: "z-ai/glm-5",
    agentSessionId: "pi-own-id",
    sessionFile: "/s/file.jsonl",
    sessionDir: "/s",
    profile: "OPENROUTER_API_KEY",
    env: { AGENTPORT_PHASE: "build", AGENTPORT_RUN_ID: "run-1" },
  });
  ids.push(parent.id);
  const p1 = await ledger.startPhase({ sessionId: parent.id, kind: "run", runId: "run-1", name: "build" });
  await ledger.finishPhase(p1.id, {
    status: "failed",
    ok: false,
    tokens: tokens(100),
    costMicroUsd: 450,
    seconds: 1.25,
    stopReason: "stop",
    failure: "pi: no envelope: x",
    details: { budget_mode: "enforce", budget_weighted_tokens: 240, timeout_clock: "both", env_fault: false },
  });
  const p2 = await ledger.startPhase({ sessionId: parent.id, kind: "nudge" });
  await ledger.finishPhase(p2.id, {
    status: "completed",
    ok: true,
    tokens: tokens(200),
    costMicroUsd: 900,
    seconds: 0.5,
    stopReason: "stop",
    failure: null,
    details: null,
  });
  await ledger.startPhase({ sessionId: parent.id, kind: "interactive" }); // still running
  const clone = await ledger.declareSession({ agent: "claude", cwd: project, parentId: parent.id, env: {} });
  ids.push(clone.id);
  const c1 = await ledger.startPhase({ sessionId: clone.id, kind: "run" });
  await ledger.finishPhase(c1.id, {
    status: "timeout",
    ok: false,
    tokens: null,
    costMicroUsd: null,
    seconds: null,
    stopReason: null,
    failure: "timeout after 1 s",
    details: { timeout_clock: "wall" },
  });
  // More than a listing shows (50): an export has them all.
  for (let i = 0; i < 55; i++)
    ids.push((await ledger.declareSession({ agent: i % 2 ? "pi" : "claude", cwd: `${project}/sub${i}`, env: {} })).id);
  return ids;
}

/** The columns of a table of the SQLite ledger in `home`, as the file has them. */
function tableColumns(home: string, table: string): string[] {
  const db = new Database(join(home, "ledger.sqlite"), { readonly: true });
  try {
    return db
      .query<{ name: string }, []>(`PRAGMA table_info(${table})`)
      .all()
      .map((c) => c.name);
  } finally {
    db.close();
  }
}

/** Every row of a ledger, phases without their local id. */
function rows(home: string) {
  const db = new Database(join(home, "ledger.sqlite"), { readonly: true });
  try {
    return {
      sessions: db.query("SELECT * FROM sessions ORDER BY id").all(),
      phases: db
        .query<Record<string, unknown>, []>("SELECT * FROM phases ORDER BY session_id, seq")
        .all()
        .map((p): Record<string, unknown> => ({ ...p, id: undefined })),
    };
  } finally {
    db.close();
  }
}

const PROCESS = ["runner_pid", "runner_start", "runner_host", "agent_pgid", "agent_start"];
/** What an import keeps of a ledger's rows: every column but the import mark, and no process of the source's host. */
function asImported<T extends { sessions: unknown[]; phases: Record<string, unknown>[] }>(r: T) {
  return {
    sessions: r.sessions.map((s) => ({ ...(s as object), imported_at: null })),
    phases: r.phases.map((p) => ({ ...p, ...Object.fromEntries(PROCESS.map((c) => [c, null])) })),
  };
}
/** An export's lines, as an import of them is exported again. */
const exportAsImported = (text: string) =>
  text
    .trim()
    .split("\n")
    .map((l) => {
      const s = JSON.parse(l);
      return JSON.stringify({
        ...s,
        imported_at: null,
        phases: s.phases.map((p: Record<string, unknown>) => ({
          ...p,
          id: undefined,
          ...Object.fromEntries(PROCESS.map((c) => [c, null])),
        })),
      });
    });

const exported = async (home: string) => {
  const ran = await agentport(["sessions", "--json", "--home", home]);
  expect(ran.code).toBe(0);
  return ran.stdout;
};

const importInto = (home: string, file: string, extra: string[] = []) => agentport(["import", file, "--json", "--home", home, ...extra]);

describe("export then import", () => {
  test("into an empty ledger: every row round-trips, the export is the same", async () => {
    const root = dir();
    const src = join(root, "src");
    const ids = await fill(src, join(root, "project"));
    const text = await exported(src);
    const lines = text.trim().split("\n");
    expect(lines).toHaveLength(ids.length);
    // Everything the ledger knows: every session column, totals, every phase column.
    const first = lines.map((l) => JSON.parse(l)).find((s) => s.agent_session_id === "pi-own-id");
    expect(Object.keys(first).sort()).toEqual([...tableColumns(src, "sessions"), "totals", "phases"].sort());
    // The phase's columns, its four token columns spelled as the verdict spells tokens (one object).
    const flat = ["tokens_in", "tokens_out", "tokens_cache_read", "tokens_cache_write"];
    expect(Object.keys(first.phases[0]).sort()).toEqual([...tableColumns(src, "phases").filter((c) => !flat.includes(c)), "tokens"].sort());
    expect(first).toMatchObject({ host: hostname(), machine_id: expect.stringMatching(/^[A-Za-z0-9-]{8,}$/) });
    expect(first).toMatchObject({
      phase: "build",
      run_id: "run-1",
      profile: "OPENROUTER_API_KEY",
      session_file: "/s/file.jsonl",
      session_dir: "/s",
    });
    expect(first.phases.map((p: { kind: string; ended_at: string | null }) => [p.kind, p.ended_at === null])).toEqual([
      ["run", false],
      ["nudge", false],
      ["interactive", true],
    ]);
    expect(first.phases[0].details).toEqual({
      budget_mode: "enforce",
      budget_weighted_tokens: 240,
      timeout_clock: "both",
      env_fault: false,
    });
    // Tokens are spelled as the verdict spells them, in the phases and in the totals.
    expect(first.phases.map((p: { tokens: unknown }) => p.tokens)).toEqual([tokens(100), tokens(200), null]);
    expect(first.totals).toMatchObject({ tokens: { input: 300, output: 302, cache_read: 304, cache_write: 306 }, cost_micro_usd: 1350 });

    const file = join(root, "export.ndjson");
    writeFileSync(file, text);
    const dst = join(root, "dst");
    const ran = await importInto(dst, file);
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout)).toMatchObject({
      sessions_added: ids.length,
      sessions_merged: 0,
      phases_added: 4,
      phases_finished: 0,
      phases_unchanged: 0,
    });
    // Every row, marked imported, without the source's processes (the running phase named its runner).
    const imported = rows(dst);
    expect(imported.sessions.every((s) => typeof (s as { imported_at: unknown }).imported_at === "string")).toBe(true);
    expect(rows(src).phases.some((p) => p.runner_pid !== null)).toBe(true);
    expect(asImported(imported)).toEqual(asImported(rows(src)));
    // Phase ids are local; the rest of the export is identical, in the same order.
    expect(exportAsImported(await exported(dst))).toEqual(exportAsImported(text));

    // Idempotent: again, nothing changes.
    const again = await importInto(dst, file);
    expect(JSON.parse(again.stdout)).toMatchObject({
      sessions_added: 0,
      sessions_merged: ids.length,
      phases_added: 0,
      phases_finished: 0,
      phases_unchanged: 4,
    });
    expect(rows(dst)).toEqual(imported);
  });

  test("an export in the flat spelling of earlier versions (tokens_in, …) still imports, and exports in the one spelling", async () => {
    const root = dir();
    const src = join(root, "src");
    await fill(src, join(root, "project"));
    const flat = (await exported(src))
      .trim()
      .split("\n")
      .map((l) => {
        const { totals: _, ...s } = JSON.parse(l);
        const phases = s.phases.map(({ tokens: t, ...p }: { tokens: ReturnType<typeof tokens> | null }) => ({
          ...p,
          tokens_in: t?.input ?? null,
          tokens_out: t?.output ?? null,
          tokens_cache_read: t?.cache_read ?? null,
          tokens_cache_write: t?.cache_write ?? null,
        }));
        return JSON.stringify({ ...s, phases });
      });
    expect(flat.filter((l) => l.includes('"tokens_in":100'))).toHaveLength(1);
    const file = join(root, "old.ndjson");
    writeFileSync(file, `${flat.join("\n")}\n`);
    const dst = join(root, "dst");
    expect((await importInto(dst, file)).code).toBe(0);
    expect(exportAsImported(await exported(dst))).toEqual(exportAsImported(await exported(src)));
    // Both spellings in one phase: refused, nothing written.
    const both = JSON.parse(flat.find((l) => l.includes('"tokens_in":100'))!);
    both.phases[0].tokens = tokens(1);
    writeFileSync(file, `${JSON.stringify(both)}\n`);
    const refused = await importInto(join(root, "dst2"), file);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("tokens_in");
  });

  test.skipIf(skipPostgres)(
    "into PostgreSQL: the same counts, the same export, idempotent; a conflicting line writes nothing",
    async () => {
      const root = dir();
      const src = join(root, "src");
      const ids = await fill(src, join(root, "project"));
      const text = await exported(src);
      const file = join(root, "export.ndjson");
      writeFileSync(file, text);
      const url = await (await postgres()).fresh();
      const ran = await importInto(root, file, ["--ledger", url]);
      expect(ran.code).toBe(0);
      expect(JSON.parse(ran.stdout)).toMatchObject({
        sessions_added: ids.length,
        sessions_merged: 0,
        phases_added: 4,
        phases_finished: 0,
        phases_unchanged: 0,
      });
      const fromServer = await agentport(["sessions", "--json", "--ledger", url]);
      expect(exportAsImported(fromServer.stdout)).toEqual(exportAsImported(text));
      const again = await importInto(root, file, ["--ledger", url]);
      expect(JSON.parse(again.stdout)).toMatchObject({ sessions_added: 0, sessions_merged: ids.length, phases_unchanged: 4 });
      // A line that contradicts the server (another birth folder): refused, and nothing of the file is written.
      const first = JSON.parse(text.split("\n")[0] ?? "{}");
      const fresh = { ...JSON.parse(text.split("\n")[1] ?? "{}"), id: "a-new-session-id", phases: [] };
      writeFileSync(file, `${JSON.stringify(fresh)}\n${JSON.stringify({ ...first, cwd: "/elsewhere" })}\n`);
      const refused = await importInto(root, file, ["--ledger", url]);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(`session ${first.id}: it was born in ${first.cwd} in this ledger, /elsewhere in the import`);
      const after = await agentport(["sessions", "--json", "--ledger", url]);
      expect(after.stdout).toBe(fromServer.stdout);
    },
  );

  test("merging: ledgers from two boxes, concatenated, read from stdin; a running phase takes the finish", async () => {
    const root = dir();
    const [a, b, dst] = [join(root, "a"), join(root, "b"), join(root, "dst")];
    await fill(a, "/box/a");
    await fill(b, "/box/b");
    const text = (await exported(a)) + (await exported(b));
    const ran = await agentport(["import", "-", "--json", "--home", dst], { stdin: text });
    expect(ran.code).toBe(0);
    expect(JSON.parse(ran.stdout).sessions_added).toBe(2 * 57);

    // The running phase of box a finishes there; a new export brings the finish.
    let sessionId = "";
    {
      await using ledger = await connectLedger(a);
      const running = (await ledger.listSessions()).find((s) => s.agent_session_id === "pi-own-id");
      sessionId = running?.id ?? "";
      const open = (await ledger.phases(sessionId)).find((p) => p.ended_at === null);
      await ledger.finishPhase(open?.id ?? -1, {
        status: "completed",
        ok: true,
        tokens: null,
        costMicroUsd: null,
        seconds: 300,
        stopReason: null,
        failure: null,
        details: { interactive: true, exit_code: 0 },
      });
    }
    const again = await agentport(["import", "-", "--json", "--home", dst], { stdin: await exported(a) });
    expect(JSON.parse(again.stdout)).toMatchObject({ sessions_added: 0, phases_added: 0, phases_finished: 1 });
    const phase = rows(dst).phases.find((p) => p.session_id === sessionId && p.kind === "interactive");
    expect(phase).toMatchObject({ status: "completed", seconds: 300, details: '{"interactive":true,"exit_code":0}' });
  });
});

describe("bad input: one error naming the line, nothing written", () => {
  async function attempt(lines: string[]) {
    const root = dir();
    const src = join(root, "src");
    await fill(src, "/p");
    const good = (await exported(src)).trim().split("\n");
    const file = join(root, "in.ndjson");
    writeFileSync(file, [good[0], "", good[1], ...lines].join("\n"));
    const dst = join(root, "dst");
    mkdirSync(dst);
    const ran = await importInto(dst, file);
    return { ...ran, dst, good, file };
  }

  const emptyLedger = async (home: string) => {
    await using ledger = await connectLedger(home);
    expect(await ledger.listSessions()).toEqual([]);
  };

  test.each([
    ["not JSON", "{nope", "line 4: not JSON"],
    [
      "a wrong type",
      JSON.stringify({ id: "x", agent: "pi", cwd: "/p", declared_at: "2026-01-01", model: 3 }),
      "line 4: model: expected a string, got a number (3)",
    ],
    [
      "an unknown agent",
      JSON.stringify({ id: "x", agent: "gpt" }),
      `line 4: agent: expected one of ${AGENT_NAMES.join(", ")}, got a string ("gpt")`,
    ],
    ["a relative folder", JSON.stringify({ id: "x", agent: "pi", cwd: "p" }), "line 4: cwd: an absolute path"],
    [
      "an unknown key",
      '{"id":"x","agent":"pi","cwd":"/p","declared_at":"d","model":null,"agent_session_id":null,"session_file":null,"session_dir":null,"parent_id":null,"phase":null,"run_id":null,"profile":null,"colour":"red"}',
      "line 4: colour: unknown key",
    ],
  ])("%s", async (_, line, expected) => {
    const ran = await attempt([line]);
    expect(ran.code).toBe(2);
    expect(ran.stderr.trim().split("\n")).toHaveLength(1);
    expect(ran.stderr).toContain(`${ran.file} ${expected}`);
    await emptyLedger(ran.dst);
  });

  test("a phase seq twice, a phase of another session", async () => {
    const root = dir();
    const src = join(root, "src");
    await fill(src, "/p");
    const record = (await exported(src))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((s) => s.phases.length === 3);
    const twice = { ...record, phases: [record.phases[0], { ...record.phases[1], seq: 1 }] };
    const foreign = { ...record, phases: [{ ...record.phases[0], session_id: "other" }] };
    for (const [bad, expected] of [
      [twice, "phases[1].seq: seq 1 appears twice"],
      [foreign, `phases[0].session_id: is not the session's id ${record.id}`],
    ] as const) {
      const file = join(root, "bad.ndjson");
      writeFileSync(file, `${JSON.stringify(bad)}\n`);
      const ran = await importInto(join(root, "dst"), file);
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain(`line 1: ${expected}`);
    }
  });

  test("a session known here with another birth folder: the whole import is refused", async () => {
    const root = dir();
    const src = join(root, "src");
    await fill(src, "/p");
    const lines = (await exported(src)).trim().split("\n");
    const target = JSON.parse(lines[5] ?? "{}");
    const dst = join(root, "dst");
    {
      await using ledger = await connectLedger(dst);
      await ledger.declareSession({ id: target.id, agent: target.agent, cwd: "/elsewhere", env: {} });
    }
    const file = join(root, "in.ndjson");
    writeFileSync(file, lines.join("\n"));
    const ran = await importInto(dst, file);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(`line 6: session ${target.id}: it was born in /elsewhere in this ledger, ${target.cwd} in the import`);
    expect(ran.stderr).toContain("(nothing was imported)");
    await using ledger = await connectLedger(dst);
    expect((await ledger.listSessions()).map((s) => s.id)).toEqual([target.id]);
  });
});
