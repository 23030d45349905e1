// The SQLite ledger, on real files in temp folders: rows, totals, resolution,
// probes, migrations, a SIGKILLed writer, and eight writers at once.
import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ledger, LedgerError, SCHEMA_VERSION, ledgerPath, type FinishPhaseInput } from "../src/io/ledger.ts";

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

describe("sessions", () => {
  test("declare, then get the same row", () => {
    using ledger = Ledger.open(home());
    const row = ledger.declareSession({ agent: "claude", cwd: "/work/project", model: "sonnet", profile: "ci", env: {} });
    expect(row.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(new Date(row.declared_at).toISOString()).toBe(row.declared_at);
    expect(ledger.getSession(row.id)).toEqual(row);
    expect(row).toMatchObject({ agent: "claude", cwd: "/work/project", model: "sonnet", profile: "ci", agent_session_id: null, phase: null, run_id: null });
    expect(ledger.getSession("nope")).toBeNull();
  });

  test("the birth folder must be absolute, and is normalised", () => {
    using ledger = Ledger.open(home());
    expect(() => ledger.declareSession({ agent: "pi", cwd: "relative/dir", env: {} })).toThrow(LedgerError);
    expect(() => ledger.declareSession({ agent: "pi", cwd: "relative/dir", env: {} })).toThrow(/absolute/);
    expect(ledger.declareSession({ agent: "pi", cwd: "/a/b/../c/", env: {} }).cwd).toBe("/a/c");
    expect(ledger.listSessions()).toHaveLength(1);
  });

  test("a given id is kept, and cannot be declared twice", () => {
    using ledger = Ledger.open(home());
    ledger.declareSession({ id: "fixed-id", agent: "pi", cwd: "/x", env: {} });
    expect(() => ledger.declareSession({ id: "fixed-id", agent: "pi", cwd: "/x", env: {} })).toThrow(/already declared/);
  });

  test("phase and run id come from AGENTPORT_PHASE / AGENTPORT_RUN_ID", () => {
    using ledger = Ledger.open(home());
    const row = ledger.declareSession({ agent: "pi", cwd: "/x", env: { AGENTPORT_PHASE: "review", AGENTPORT_RUN_ID: "run-7" } });
    expect(ledger.getSession(row.id)).toMatchObject({ phase: "review", run_id: "run-7" });
    const bare = ledger.declareSession({ agent: "pi", cwd: "/x", env: { AGENTPORT_PHASE: "" } });
    expect(bare).toMatchObject({ phase: null, run_id: null });
  });

  test("bind the agent's own session id and file", () => {
    using ledger = Ledger.open(home());
    const row = ledger.declareSession({ agent: "pi", cwd: "/x", parentId: "parent-1", env: {} });
    ledger.bindAgentSession(row.id, "pi-session-1", "/x/.pi/s1.jsonl");
    expect(ledger.getSession(row.id)).toMatchObject({ agent_session_id: "pi-session-1", session_file: "/x/.pi/s1.jsonl", parent_id: "parent-1" });
    // Without a file the bound one is kept.
    expect(ledger.bindAgentSession(row.id, "pi-session-2")).toMatchObject({ agent_session_id: "pi-session-2", session_file: "/x/.pi/s1.jsonl" });
    expect(() => ledger.bindAgentSession("missing", "x")).toThrow(/no session missing/);
  });
});

describe("phases", () => {
  test("seq counts up per session", () => {
    using ledger = Ledger.open(home());
    const a = ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
    const b = ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
    const seqs = [a, a, b, a].map((s) => ledger.startPhase({ sessionId: s.id, kind: "run" }).seq);
    expect(seqs).toEqual([1, 2, 1, 3]);
    const first = ledger.phases(a.id)[0]!;
    expect(first).toMatchObject({ session_id: a.id, seq: 1, kind: "run", ended_at: null, status: null, ok: null, run_id: null });
    expect(() => ledger.startPhase({ sessionId: "missing", kind: "run" })).toThrow(/no session missing/);
  });

  test("finish records the outcome, once", () => {
    using ledger = Ledger.open(home());
    const s = ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
    const p = ledger.startPhase({ sessionId: s.id, kind: "resume", name: "fix", runId: "run-1" });
    const finished = ledger.finishPhase(p.id, done({ status: "timeout", ok: false, failure: "no output for 60s", stopReason: null }));
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
    expect(ledger.phases(s.id)).toEqual([finished]);
    expect(() => ledger.finishPhase(p.id, done())).toThrow(/already finished/);
    expect(() => ledger.finishPhase(9999, done())).toThrow(/no phase 9999/);
  });

  test("a fractional token count or cost is refused by the STRICT table", () => {
    using ledger = Ledger.open(home());
    const s = ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
    const p = ledger.startPhase({ sessionId: s.id, kind: "run" });
    expect(() => ledger.finishPhase(p.id, done({ costMicroUsd: 1.5 }))).toThrow(/cost_micro_usd/);
    expect(ledger.getPhase(p.id)?.ended_at).toBeNull(); // rolled back
  });
});

describe("listing with totals", () => {
  test("sums over finished phases; a value missing from one makes its sum null", () => {
    using ledger = Ledger.open(home());
    const full = ledger.declareSession({ agent: "claude", cwd: "/one", env: {} });
    const gap = ledger.declareSession({ agent: "pi", cwd: "/two/", env: {} });
    const none = ledger.declareSession({ agent: "pi", cwd: "/two", env: {} });
    for (const extra of [{}, { seconds: 1.5 }]) {
      ledger.finishPhase(ledger.startPhase({ sessionId: full.id, kind: "run" }).id, done(extra));
    }
    ledger.finishPhase(ledger.startPhase({ sessionId: gap.id, kind: "run" }).id, done());
    ledger.finishPhase(ledger.startPhase({ sessionId: gap.id, kind: "nudge" }).id, done({ costMicroUsd: null, status: "failed", ok: false }));
    ledger.startPhase({ sessionId: gap.id, kind: "nudge" }); // unfinished: counted, not summed
    ledger.startPhase({ sessionId: none.id, kind: "run" });

    const list = ledger.listSessions();
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
    expect(f).toMatchObject(ledger.getSession(full.id)!);
    expect(ledger.sessionWithTotals(gap.id)).toEqual(g!);
    expect(ledger.sessionWithTotals("missing")).toBeNull();
    const { totals: _totals, ...bare } = f!;
    expect(bare).toEqual(ledger.getSession(full.id)!);
  });

  test("null tokens null every token sum", () => {
    using ledger = Ledger.open(home());
    const s = ledger.declareSession({ agent: "claude", cwd: "/x", env: {} });
    ledger.finishPhase(ledger.startPhase({ sessionId: s.id, kind: "run" }).id, done());
    ledger.finishPhase(ledger.startPhase({ sessionId: s.id, kind: "run" }).id, done({ tokens: null }));
    expect(ledger.listSessions()[0]!.totals).toMatchObject({ tokens_in: null, tokens_out: null, cost_micro_usd: 3000, last_status: "completed" });
  });

  test("filters by agent and folder, and limits", () => {
    using ledger = Ledger.open(home());
    const ids = ["/a", "/b", "/a", "/a"].map((cwd, i) => ledger.declareSession({ agent: i === 3 ? "pi" : "claude", cwd, env: {} }).id);
    const pick = (...at: number[]) => at.map((i) => ids[i]!);
    expect(ledger.listSessions({ cwd: "/a/" }).map((s) => s.id)).toEqual(pick(3, 2, 0));
    expect(ledger.listSessions({ agent: "claude", cwd: "/a" }).map((s) => s.id)).toEqual(pick(2, 0));
    expect(ledger.listSessions({ limit: 2 }).map((s) => s.id)).toEqual(pick(3, 2));
    expect(ledger.listSessions({ agent: "pi", cwd: "/b" })).toEqual([]);
  });
});

describe("resolveSession", () => {
  function seeded() {
    const ledger = Ledger.open(home());
    const declare = (id: string, agentSessionId?: string) =>
      ledger.declareSession({ id, agent: "claude", cwd: "/x", agentSessionId, env: {} });
    declare("1111aaaa-one", "9999zzzz-agent-one");
    declare("1111bbbb-two");
    declare("ab_d-literal");
    declare("abxd-other");
    declare("pc%t-literal");
    declare("pcxt-other");
    declare("abc");
    return ledger;
  }

  test("exact id, exact agent session id, unique prefix", () => {
    using ledger = seeded();
    expect(ledger.resolveSession("1111aaaa-one")).toMatchObject({ kind: "found", session: { id: "1111aaaa-one" } });
    expect(ledger.resolveSession("9999zzzz-agent-one")).toMatchObject({ kind: "found", session: { id: "1111aaaa-one" } });
    expect(ledger.resolveSession("1111b")).toMatchObject({ kind: "found", session: { id: "1111bbbb-two" } });
    expect(ledger.resolveSession("9999")).toMatchObject({ kind: "found", session: { id: "1111aaaa-one" } });
    expect(ledger.resolveSession("abc")).toMatchObject({ kind: "found", session: { id: "abc" } }); // short, but exact
  });

  test("ambiguous and unknown", () => {
    using ledger = seeded();
    const amb = ledger.resolveSession("1111");
    expect(amb.kind).toBe("ambiguous");
    if (amb.kind === "ambiguous") expect(amb.candidates.map((c) => c.id).sort()).toEqual(["1111aaaa-one", "1111bbbb-two"]);
    expect(ledger.resolveSession("2222")).toEqual({ kind: "unknown" });
    expect(ledger.resolveSession("111")).toEqual({ kind: "unknown" }); // under 4 characters, not exact
    expect(ledger.resolveSession("")).toEqual({ kind: "unknown" });
  });

  test("LIKE wildcards in the prefix are literal", () => {
    using ledger = seeded();
    expect(ledger.resolveSession("ab_d")).toMatchObject({ kind: "found", session: { id: "ab_d-literal" } });
    expect(ledger.resolveSession("pc%t")).toMatchObject({ kind: "found", session: { id: "pc%t-literal" } });
    expect(ledger.resolveSession("%%%%")).toEqual({ kind: "unknown" });
    expect(ledger.resolveSession("____")).toEqual({ kind: "unknown" });
    expect(ledger.resolveSession("ab\\d")).toEqual({ kind: "unknown" });
  });
});

describe("probes", () => {
  test("cached by path, size and mtime", () => {
    using ledger = Ledger.open(home());
    expect(ledger.getProbe("/f.jsonl", 10, 1000)).toBeNull();
    ledger.putProbe("/f.jsonl", 10, 1000.7, { lines: 3, model: "m" });
    expect(ledger.getProbe("/f.jsonl", 10, 1000.2)).toMatchObject({ path: "/f.jsonl", size: 10, mtime_ms: 1000, data: { lines: 3, model: "m" } });
    expect(ledger.getProbe("/f.jsonl", 11, 1000)).toBeNull();
    expect(ledger.getProbe("/f.jsonl", 10, 1001)).toBeNull();
    expect(ledger.getProbe("/g.jsonl", 10, 1000)).toBeNull();
    // A newer version of the file replaces the old entry.
    ledger.putProbe("/f.jsonl", 20, 2000, null);
    expect(ledger.getProbe("/f.jsonl", 20, 2000)?.data).toBeNull();
    expect(ledger.getProbe("/f.jsonl", 10, 1000)).toBeNull();
  });
});

describe("the file", () => {
  const rawVersion = (path: string): number => {
    using db = new Database(path, { readonly: true });
    return db.query<{ user_version: number }, []>("PRAGMA user_version").get()!.user_version;
  };

  test("a fresh file is WAL, at the latest schema version; re-opening is idempotent", () => {
    const dir = join(home(), "nested", "state");
    const first = Ledger.open(dir);
    const row = first.declareSession({ agent: "pi", cwd: "/x", env: {} });
    first.close();
    first.close(); // twice is fine
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(1);
    expect(rawVersion(ledgerPath(dir))).toBe(SCHEMA_VERSION);
    using again = Ledger.open(dir);
    expect(again.schemaVersion()).toBe(SCHEMA_VERSION);
    expect(again.getSession(row.id)).toEqual(row);
    expect(again.integrityCheck()).toBe("ok");
    using db = new Database(ledgerPath(dir), { readonly: true });
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()!.journal_mode).toBe("wal");
  });

  test("a file from a newer agentport is refused, naming both versions", () => {
    const dir = home();
    Ledger.open(dir).close();
    const path = ledgerPath(dir);
    {
      using db = new Database(path);
      db.run(`PRAGMA user_version = ${SCHEMA_VERSION + 5}`);
    }
    expect(() => Ledger.open(dir)).toThrow(LedgerError);
    expect(() => Ledger.open(dir)).toThrow(`${path} has schema version ${SCHEMA_VERSION + 5}, newer than this agentport knows (${SCHEMA_VERSION})`);
  });

  test("a file that is not SQLite is refused, naming the path", () => {
    const dir = home();
    const path = ledgerPath(dir);
    writeFileSync(path, "this is not a database\n".repeat(100));
    expect(() => Ledger.open(dir)).toThrow(`${path} is not an agentport ledger: not a SQLite database`);
  });

  test("another SQLite database is not taken over", () => {
    const dir = home();
    const path = ledgerPath(dir);
    {
      using db = new Database(path);
      db.run("CREATE TABLE notes (body TEXT)");
    }
    expect(() => Ledger.open(dir)).toThrow(`${path} is a SQLite database but not an agentport ledger`);
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

    using ledger = Ledger.open(dir);
    expect(ledger.getSession(id)).toMatchObject({ id, agent: "pi" });
    expect(ledger.phases(id)).toEqual([expect.objectContaining({ id: phase, seq: 1, ended_at: null, status: null })]);
    expect(ledger.integrityCheck()).toBe("ok");
  });

  test("8 processes × 200 declares on one fresh file: every row, no 'database is locked'", async () => {
    const dir = home();
    const workers = Array.from({ length: 8 }, (_, i) =>
      Bun.spawn([process.execPath, WORKER, "hammer", dir, "200", `w${i}`], { stdout: "pipe", stderr: "pipe" }),
    );
    const results = await Promise.all(
      workers.map(async (w) => ({ code: await w.exited, stdout: await new Response(w.stdout).text(), stderr: await new Response(w.stderr).text() })),
    );
    for (const r of results) {
      expect(r.stderr).not.toContain("database is locked");
      expect(r).toMatchObject({ code: 0, stdout: "done 200\n" });
    }
    using ledger = Ledger.open(dir);
    const sessions = ledger.listSessions();
    expect(sessions).toHaveLength(1600);
    expect(new Set(sessions.map((s) => s.id)).size).toBe(1600);
    expect(sessions.every((s) => s.totals.phase_count === 1 && s.totals.last_status === "completed")).toBe(true);
    expect(ledger.integrityCheck()).toBe("ok");
  });
});
