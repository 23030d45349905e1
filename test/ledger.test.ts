// The ledger on both engines: rows, totals, resolution, probes and
// migrations against a SQLite file in a temp folder and against a fresh
// database of a real PostgreSQL (test/pg.ts); the file's own rules, a
// SIGKILLed writer, and eight writers at once on one file.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostname } from "node:os";
import { LedgerError, SCHEMA_VERSION, connectLedger, ledgerPath, type FinishPhaseInput, type Ledger } from "../src/io/ledger.ts";
import { postgres, usePostgres } from "./pg.ts";

const WORKER = join(import.meta.dir, "ledger-worker.ts");
const dirs: string[] = [];

function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentport-ledger-"));
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const skipPostgres = usePostgres("test/ledger.test.ts");
const BACKENDS: { name: string; open: () => Promise<Ledger> }[] = [
  { name: "sqlite", open: () => connectLedger(home()) },
  ...(skipPostgres ? [] : [{ name: "postgres", open: async () => connectLedger(home(), await (await postgres()).fresh()) }]),
];

const done = (extra: Partial<FinishPhaseInput> = {}): FinishPhaseInput => ({
  status: "completed",
  ok: true,
  tokens: { input: 100, output: 20, cache_read: 5, cache_write: 1 },
  costMicroUsd: 1500,
  seconds: 2.5,
  stopReason: "end_turn",
  failure: null,
  ...extra,
});

for (const backend of BACKENDS) {
  describe(backend.name, () => {
    describe("sessions", () => {
      test("declare, then get the same row", async () => {
        await using ledger = await backend.open();
        const row = await ledger.declareSession({ agent: "claude", cwd: "/work/project", model: "sonnet", profile: "ci", env: {} });
        expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
        expect(new Date(row.declared_at).toISOString()).toBe(row.declared_at);
        expect(await ledger.getSession(row.id)).toEqual(row);
        expect(row).toMatchObject({
          agent: "claude",
          cwd: "/work/project",
          model: "sonnet",
          profile: "ci",
          agent_session_id: null,
          phase: null,
          run_id: null,
        });
        expect(row).toMatchObject({ host: hostname(), machine_id: ledger.thisHost().machineId });
        expect(await ledger.getSession("nope")).toBeNull();
      });

      test("the birth folder must be absolute, and is normalised", async () => {
        await using ledger = await backend.open();
        await expect(ledger.declareSession({ agent: "pi", cwd: "relative/dir", env: {} })).rejects.toThrow(LedgerError);
        await expect(ledger.declareSession({ agent: "pi", cwd: "relative/dir", env: {} })).rejects.toThrow(/absolute/);
        expect((await ledger.declareSession({ agent: "pi", cwd: "/a/b/../c/", env: {} })).cwd).toBe("/a/c");
        expect(await ledger.listSessions()).toHaveLength(1);
      });

      test("a given id is kept, and cannot be declared twice", async () => {
        await using ledger = await backend.open();
        await ledger.declareSession({ id: "fixed-id", agent: "pi", cwd: "/x", env: {} });
        await expect(ledger.declareSession({ id: "fixed-id", agent: "pi", cwd: "/x", env: {} })).rejects.toThrow(/already declared/);
      });

      test("phase and run id come from AGENTPORT_PHASE / AGENTPORT_RUN_ID", async () => {
        await using ledger = await backend.open();
        const row = await ledger.declareSession({ agent: "pi", cwd: "/x", env: { AGENTPORT_PHASE: "review", AGENTPORT_RUN_ID: "run-7" } });
        expect(await ledger.getSession(row.id)).toMatchObject({ phase: "review", run_id: "run-7" });
        const bare = await ledger.declareSession({ agent: "pi", cwd: "/x", env: { AGENTPORT_PHASE: "" } });
        expect(bare).toMatchObject({ phase: null, run_id: null });
      });

      test("bind the agent's own session id and file", async () => {
        await using ledger = await backend.open();
        const row = await ledger.declareSession({ agent: "pi", cwd: "/x", parentId: "parent-1", env: {} });
        await ledger.bindAgentSession(row.id, "pi-session-1", "/x/.pi/s1.jsonl");
        expect(await ledger.getSession(row.id)).toMatchObject({
          agent_session_id: "pi-session-1",
          session_file: "/x/.pi/s1.jsonl",
          parent_id: "parent-1",
        });
        // Without a file the bound one is kept.
        expect(await ledger.bindAgentSession(row.id, "pi-session-2")).toMatchObject({
          agent_session_id: "pi-session-2",
          session_file: "/x/.pi/s1.jsonl",
        });
        await expect(ledger.bindAgentSession("missing", "x")).rejects.toThrow(/no session missing/);
      });
    });

    describe("phases", () => {
      test("seq counts up per session", async () => {
        await using ledger = await backend.open();
        const a = await ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
        const b = await ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
        const seqs: number[] = [];
        for (const s of [a, a, b, a]) seqs.push((await ledger.startPhase({ sessionId: s.id, kind: "run" })).seq);
        expect(seqs).toEqual([1, 2, 1, 3]);
        const first = (await ledger.phases(a.id))[0]!;
        expect(first).toMatchObject({ session_id: a.id, seq: 1, kind: "run", ended_at: null, status: null, ok: null, run_id: null });
        await expect(ledger.startPhase({ sessionId: "missing", kind: "run" })).rejects.toThrow(/no session missing/);
      });

      test("finish records the outcome, once", async () => {
        await using ledger = await backend.open();
        const s = await ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
        const p = await ledger.startPhase({ sessionId: s.id, kind: "resume", name: "fix", runId: "run-1" });
        const finished = await ledger.finishPhase(
          p.id,
          done({ status: "timeout", ok: false, failure: "no output for 60s", stopReason: null }),
        );
        expect(finished).toMatchObject({
          id: p.id,
          seq: 1,
          name: "fix",
          kind: "resume",
          run_id: "run-1",
          status: "timeout",
          ok: false,
          tokens_in: 100,
          tokens_out: 20,
          tokens_cache_read: 5,
          tokens_cache_write: 1,
          cost_micro_usd: 1500,
          seconds: 2.5,
          stop_reason: null,
          failure: "no output for 60s",
        });
        expect(finished.ended_at).not.toBeNull();
        expect(await ledger.phases(s.id)).toEqual([finished]);
        await expect(ledger.finishPhase(p.id, done())).rejects.toThrow(/already finished/);
        await expect(ledger.finishPhase(9999, done())).rejects.toThrow(/no phase 9999/);
      });

      test("a fractional token count or cost is refused, and nothing is written", async () => {
        await using ledger = await backend.open();
        const s = await ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
        const p = await ledger.startPhase({ sessionId: s.id, kind: "run" });
        await expect(ledger.finishPhase(p.id, done({ costMicroUsd: 1.5 }))).rejects.toThrow(/cost_micro_usd/);
        expect((await ledger.getPhase(p.id))?.ended_at).toBeNull(); // rolled back
      });
    });

    describe("listing with totals", () => {
      test("sums over finished phases; a value missing from one makes its sum null", async () => {
        await using ledger = await backend.open();
        const full = await ledger.declareSession({ agent: "claude", cwd: "/one", env: {} });
        const gap = await ledger.declareSession({ agent: "pi", cwd: "/two/", env: {} });
        const none = await ledger.declareSession({ agent: "pi", cwd: "/two", env: {} });
        for (const extra of [{}, { seconds: 1.5 }]) {
          await ledger.finishPhase((await ledger.startPhase({ sessionId: full.id, kind: "run" })).id, done(extra));
        }
        await ledger.finishPhase((await ledger.startPhase({ sessionId: gap.id, kind: "run" })).id, done());
        await ledger.finishPhase(
          (await ledger.startPhase({ sessionId: gap.id, kind: "nudge" })).id,
          done({ costMicroUsd: null, status: "failed", ok: false }),
        );
        await ledger.startPhase({ sessionId: gap.id, kind: "nudge" }); // unfinished: counted, not summed
        await ledger.startPhase({ sessionId: none.id, kind: "run" });

        const list = await ledger.listSessions();
        expect(list.map((s) => s.id)).toEqual([none.id, gap.id, full.id]);
        const [n, g, f] = list;
        expect(f!.totals).toEqual({
          phase_count: 2,
          last_status: "completed",
          tokens_in: 200,
          tokens_out: 40,
          tokens_cache_read: 10,
          tokens_cache_write: 2,
          cost_micro_usd: 3000,
          seconds: 4,
        });
        expect(g!.totals).toMatchObject({ phase_count: 3, last_status: null, tokens_in: 200, cost_micro_usd: null, seconds: 5 });
        expect(n!.totals).toEqual({
          phase_count: 1,
          last_status: null,
          tokens_in: null,
          tokens_out: null,
          tokens_cache_read: null,
          tokens_cache_write: null,
          cost_micro_usd: null,
          seconds: null,
        });
        expect(f).toMatchObject((await ledger.getSession(full.id))!);
        expect(await ledger.sessionWithTotals(gap.id)).toEqual(g!);
        expect(await ledger.sessionWithTotals("missing")).toBeNull();
        const { totals: _totals, ...bare } = f!;
        expect(bare).toEqual((await ledger.getSession(full.id))!);
      });

      test("null tokens null every token sum", async () => {
        await using ledger = await backend.open();
        const s = await ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
        await ledger.finishPhase((await ledger.startPhase({ sessionId: s.id, kind: "run" })).id, done());
        await ledger.finishPhase((await ledger.startPhase({ sessionId: s.id, kind: "run" })).id, done({ tokens: null }));
        expect((await ledger.listSessions())[0]!.totals).toMatchObject({
          tokens_in: null,
          tokens_out: null,
          cost_micro_usd: 3000,
          last_status: "completed",
        });
      });

      test("filters by agent and folder, and limits", async () => {
        await using ledger = await backend.open();
        const ids: string[] = [];
        for (const [i, cwd] of ["/a", "/b", "/a", "/a"].entries())
          ids.push((await ledger.declareSession({ agent: i === 3 ? "pi" : "claude", cwd, env: {} })).id);
        const pick = (...at: number[]) => at.map((i) => ids[i]!);
        expect((await ledger.listSessions({ cwd: "/a/" })).map((s) => s.id)).toEqual(pick(3, 2, 0));
        expect((await ledger.listSessions({ agent: "claude", cwd: "/a" })).map((s) => s.id)).toEqual(pick(2, 0));
        expect((await ledger.listSessions({ limit: 2 })).map((s) => s.id)).toEqual(pick(3, 2));
        expect(await ledger.listSessions({ agent: "pi", cwd: "/b" })).toEqual([]);
      });
    });

    describe("resolveSession", () => {
      async function seeded() {
        const ledger = await backend.open();
        const declare = (id: string, agentSessionId?: string) =>
          ledger.declareSession({ id, agent: "claude", cwd: "/x", agentSessionId, env: {} });
        await declare("1111aaaa-one", "9999zzzz-agent-one");
        await declare("1111bbbb-two");
        await declare("ab_d-literal");
        await declare("abxd-other");
        await declare("pc%t-literal");
        await declare("pcxt-other");
        await declare("abc");
        return ledger;
      }

      test("exact id, exact agent session id, unique prefix", async () => {
        await using ledger = await seeded();
        expect(await ledger.resolveSession("1111aaaa-one")).toMatchObject({ kind: "found", session: { id: "1111aaaa-one" } });
        expect(await ledger.resolveSession("9999zzzz-agent-one")).toMatchObject({ kind: "found", session: { id: "1111aaaa-one" } });
        expect(await ledger.resolveSession("1111b")).toMatchObject({ kind: "found", session: { id: "1111bbbb-two" } });
        expect(await ledger.resolveSession("9999")).toMatchObject({ kind: "found", session: { id: "1111aaaa-one" } });
        expect(await ledger.resolveSession("abc")).toMatchObject({ kind: "found", session: { id: "abc" } }); // short, but exact
      });

      test("ambiguous and unknown", async () => {
        await using ledger = await seeded();
        const amb = await ledger.resolveSession("1111");
        expect(amb.kind).toBe("ambiguous");
        if (amb.kind === "ambiguous") expect(amb.candidates.map((c) => c.id).sort()).toEqual(["1111aaaa-one", "1111bbbb-two"]);
        expect(await ledger.resolveSession("2222")).toEqual({ kind: "unknown" });
        expect(await ledger.resolveSession("111")).toEqual({ kind: "unknown" }); // under 4 characters, not exact
        expect(await ledger.resolveSession("")).toEqual({ kind: "unknown" });
      });

      test("LIKE wildcards in the prefix are literal", async () => {
        await using ledger = await seeded();
        expect(await ledger.resolveSession("ab_d")).toMatchObject({ kind: "found", session: { id: "ab_d-literal" } });
        expect(await ledger.resolveSession("pc%t")).toMatchObject({ kind: "found", session: { id: "pc%t-literal" } });
        expect(await ledger.resolveSession("%%%%")).toEqual({ kind: "unknown" });
        expect(await ledger.resolveSession("____")).toEqual({ kind: "unknown" });
        expect(await ledger.resolveSession("ab\\d")).toEqual({ kind: "unknown" });
      });
    });

    describe("probes", () => {
      test("cached by path, size and mtime", async () => {
        await using ledger = await backend.open();
        expect(await ledger.getProbe("/f.jsonl", 10, 1000)).toBeNull();
        await ledger.putProbe("/f.jsonl", 10, 1000.7, { lines: 3, model: "m" });
        expect(await ledger.getProbe("/f.jsonl", 10, 1000.2)).toMatchObject({
          path: "/f.jsonl",
          size: 10,
          mtime_ms: 1000,
          data: { lines: 3, model: "m" },
        });
        expect(await ledger.getProbe("/f.jsonl", 11, 1000)).toBeNull();
        expect(await ledger.getProbe("/f.jsonl", 10, 1001)).toBeNull();
        expect(await ledger.getProbe("/g.jsonl", 10, 1000)).toBeNull();
        // A newer version of the file replaces the old entry.
        await ledger.putProbe("/f.jsonl", 20, 2000, null);
        expect((await ledger.getProbe("/f.jsonl", 20, 2000))?.data).toBeNull();
        expect(await ledger.getProbe("/f.jsonl", 10, 1000)).toBeNull();
      });
    });
  });
}

describe("the file", () => {
  const rawVersion = (path: string): number => {
    using db = new Database(path, { readonly: true });
    return db.query<{ user_version: number }, []>("PRAGMA user_version").get()!.user_version;
  };

  test("a fresh file is WAL, at the latest schema version; re-opening is idempotent", async () => {
    const dir = join(home(), "nested", "state");
    const first = await connectLedger(dir);
    const row = await first.declareSession({ agent: "pi", cwd: "/x", env: {} });
    await first.close();
    await first.close(); // twice is fine
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(1);
    expect(rawVersion(ledgerPath(dir))).toBe(SCHEMA_VERSION);
    await using again = await connectLedger(dir);
    expect(await again.schemaVersion()).toBe(SCHEMA_VERSION);
    expect(await again.getSession(row.id)).toEqual(row);
    expect(await again.integrityCheck()).toBe("ok");
    using db = new Database(ledgerPath(dir), { readonly: true });
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()!.journal_mode).toBe("wal");
  });

  test("a file from a newer agentport is refused, naming both versions", async () => {
    const dir = home();
    await (await connectLedger(dir)).close();
    const path = ledgerPath(dir);
    {
      using db = new Database(path);
      db.run(`PRAGMA user_version = ${SCHEMA_VERSION + 5}`);
    }
    await expect(connectLedger(dir)).rejects.toThrow(LedgerError);
    await expect(connectLedger(dir)).rejects.toThrow(
      `${path} has schema version ${SCHEMA_VERSION + 5}, newer than this agentport knows (${SCHEMA_VERSION})`,
    );
  });

  test("a file that is not SQLite is refused, naming the path", async () => {
    const dir = home();
    const path = ledgerPath(dir);
    writeFileSync(path, "this is not a database\n".repeat(100));
    await expect(connectLedger(dir)).rejects.toThrow(`${path} is not an agentport ledger: not a SQLite database`);
  });

  test("another SQLite database is not taken over", async () => {
    const dir = home();
    const path = ledgerPath(dir);
    {
      using db = new Database(path);
      db.run("CREATE TABLE notes (body TEXT)");
    }
    await expect(connectLedger(dir)).rejects.toThrow(`${path} is a SQLite database but not an agentport ledger`);
  });
});

async function firstLine(stream: ReadableStream<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    const end = text.indexOf("\n");
    if (end >= 0) return text.slice(0, end);
  }
  throw new Error(`stream ended before a line: ${JSON.stringify(text)}`);
}

describe("processes", () => {
  test("a session declared by a SIGKILLed process survives, and the file is intact", async () => {
    const dir = home();
    const proc = Bun.spawn([process.execPath, WORKER, "declare-then-hang", dir], { stdout: "pipe", stderr: "pipe" });
    const { id, phase } = JSON.parse(await firstLine(proc.stdout)) as { id: string; phase: number };
    proc.kill("SIGKILL");
    expect(await proc.exited).not.toBe(0);
    expect(proc.signalCode).toBe("SIGKILL");

    await using ledger = await connectLedger(dir);
    expect(await ledger.getSession(id)).toMatchObject({ id, agent: "pi" });
    expect(await ledger.phases(id)).toEqual([expect.objectContaining({ id: phase, seq: 1, ended_at: null, status: null })]);
    expect(await ledger.integrityCheck()).toBe("ok");
  });

  test("8 processes × 200 declares on one fresh file: every row, no 'database is locked'", async () => {
    const dir = home();
    const workers = Array.from({ length: 8 }, (_, i) =>
      Bun.spawn([process.execPath, WORKER, "hammer", dir, "200", `w${i}`], { stdout: "pipe", stderr: "pipe" }),
    );
    const results = await Promise.all(
      workers.map(async (w) => ({
        code: await w.exited,
        stdout: await new Response(w.stdout).text(),
        stderr: await new Response(w.stderr).text(),
      })),
    );
    for (const r of results) {
      expect(r.stderr).not.toContain("database is locked");
      expect(r).toMatchObject({ code: 0, stdout: "done 200\n" });
    }
    await using ledger = await connectLedger(dir);
    const sessions = await ledger.listSessions();
    expect(sessions).toHaveLength(1600);
    expect(new Set(sessions.map((s) => s.id)).size).toBe(1600);
    expect(sessions.every((s) => s.totals.phase_count === 1 && s.totals.last_status === "completed")).toBe(true);
    expect(await ledger.integrityCheck()).toBe("ok");
  });
});
