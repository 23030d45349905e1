// The PostgreSQL engine's own rules, against a real server (test/pg.ts):
// migrations versioned in schema_migrations (once, under concurrent openers),
// a newer or foreign database refused, a connection killed mid-run survived,
// an unreachable server refused at once, sslmode honoured, and the URL's
// password in no message.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { LedgerError, LedgerUnreachable, SCHEMA_VERSION, connectLedger } from "../src/io/ledger.ts";
import { PG_PASSWORD, postgres, usePostgres } from "./pg.ts";

const dirs: string[] = [];
function home(): string {
  const dir = mkdtempSync(join(tmpdir(), "agentport-ledger-pg-"));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const skip = usePostgres("test/ledger-postgres.test.ts");
const shown = (url: string) => url.replace(`:${PG_PASSWORD}@`, ":[redacted]@");

const finish = {
  status: "completed",
  ok: true,
  tokens: { input: 1, output: 2, cache_read: 0, cache_write: 0 },
  costMicroUsd: 5,
  seconds: 1,
  stopReason: null,
  failure: null,
} as const;

async function raw<T>(url: string, body: (sql: SQL) => Promise<T>): Promise<T> {
  const sql = new SQL(url, { max: 1 });
  try {
    return await body(sql);
  } finally {
    await sql.close();
  }
}

describe.skipIf(skip)("postgres", () => {
  test("a fresh database is migrated once, even by eight openers at a time; the versions are in schema_migrations", async () => {
    const url = await (await postgres()).fresh();
    const ledgers = await Promise.all(Array.from({ length: 8 }, () => connectLedger(home(), url)));
    for (const ledger of ledgers) expect(await ledger.schemaVersion()).toBe(SCHEMA_VERSION);
    await Promise.all(ledgers.map((l) => l.close()));
    const versions = await raw(url, (sql) => sql.unsafe<{ version: number }[]>("SELECT version FROM schema_migrations ORDER BY version"));
    expect(versions.map((v) => v.version)).toEqual(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1));
    await using again = await connectLedger(home(), url);
    expect(await again.integrityCheck()).toBe("ok");
    expect(again.path).toBe(shown(url));
  });

  test("a database from a newer agentport is refused, naming both versions and the URL without its password", async () => {
    const url = await (await postgres()).fresh();
    await (await connectLedger(home(), url)).close();
    await raw(url, (sql) => sql.unsafe(`INSERT INTO schema_migrations VALUES (${SCHEMA_VERSION + 5}, 'later')`));
    const refused = connectLedger(home(), url);
    await expect(refused).rejects.toThrow(LedgerError);
    await expect(connectLedger(home(), url)).rejects.toThrow(
      `the ledger ${shown(url)} has schema version ${SCHEMA_VERSION + 5}, newer than this agentport knows (${SCHEMA_VERSION})`,
    );
  });

  test("a database that holds another sessions table is not taken over", async () => {
    const url = await (await postgres()).fresh();
    await raw(url, (sql) => sql.unsafe("CREATE TABLE sessions (who TEXT)"));
    await expect(connectLedger(home(), url)).rejects.toThrow(
      `${shown(url)} has a sessions table but no schema_migrations: not an agentport ledger`,
    );
  });

  test("the connection killed (pg_terminate_backend) while the agent runs: the finish is retried and lands once", async () => {
    const pg = await postgres();
    const url = await pg.fresh();
    const db = new URL(url).pathname.slice(1);
    await using ledger = await connectLedger(home(), url);
    const session = await ledger.declareSession({ agent: "pi", cwd: "/x", env: {} });
    const phase = await ledger.startPhase({ sessionId: session.id, kind: "run" });
    const killed = await pg.admin.unsafe<{ killed: boolean }[]>(
      `SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE datname = $1`,
      [db],
    );
    expect(killed.length).toBeGreaterThan(0);
    expect(killed.every((k) => k.killed)).toBe(true);
    const done = await ledger.finishPhase(phase.id, finish);
    expect(done).toMatchObject({ id: phase.id, status: "completed", tokens_in: 1 });
    // Killed again, between two declarations: nothing lost, nothing doubled.
    await pg.admin.unsafe(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [db]);
    await ledger.declareSession({ agent: "pi", cwd: "/x", env: {} });
    const sessions = await ledger.listSessions();
    expect(sessions).toHaveLength(2);
    expect(sessions.find((s) => s.id === session.id)?.totals).toMatchObject({ phase_count: 1, last_status: "completed" });
  });

  test("a server that cannot be reached is refused at once, without the password", async () => {
    const pg = await postgres();
    const closed = `postgres://agentport:${PG_PASSWORD}@127.0.0.1:1/nowhere`;
    const error = await connectLedger(home(), closed).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LedgerUnreachable);
    expect((error as Error).message).toContain("the ledger postgres://agentport:[redacted]@127.0.0.1:1/nowhere is unreachable");
    expect((error as Error).message).not.toContain(PG_PASSWORD);
    // A wrong password is the server's answer: named, and the wrong password not repeated either.
    const wrong = `postgres://agentport:not-the-${PG_PASSWORD}@127.0.0.1:${pg.port}/postgres`;
    const denied = await connectLedger(home(), wrong).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(denied?.message).toContain("password authentication failed");
    expect(denied?.message).not.toContain(PG_PASSWORD);
  });

  test("sslmode is honoured: require connects over TLS, disable without, verify-full refuses a certificate no CA signed", async () => {
    const pg = await postgres();
    const url = await pg.fresh();
    const db = new URL(url).pathname.slice(1);
    // Each ledger names its connections (a startup parameter in the URL), so a closing pool is not counted.
    const overTls = async (app: string) => {
      const rows = await pg.admin.unsafe<{ ssl: boolean }[]>(
        `SELECT s.ssl FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.datname = $1 AND a.application_name = $2`,
        [db, app],
      );
      return rows.map((r) => r.ssl);
    };
    {
      await using tls = await connectLedger(home(), `${url}?sslmode=require&application_name=over-tls`);
      await tls.declareSession({ agent: "pi", cwd: "/x", env: {} });
      expect(await overTls("over-tls")).toContain(true);
      expect(await overTls("over-tls")).not.toContain(false);
    }
    {
      await using plain = await connectLedger(home(), `${url}?sslmode=disable&application_name=in-clear`);
      await plain.declareSession({ agent: "pi", cwd: "/x", env: {} });
      expect(await overTls("in-clear")).toContain(false);
      expect(await overTls("in-clear")).not.toContain(true);
    }
    const refused = await connectLedger(home(), `${url}?sslmode=verify-full`).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(refused).toBeInstanceOf(LedgerError);
    expect(refused?.message).toContain(`cannot open the ledger ${shown(url)}?sslmode=verify-full`);
    expect(refused?.message).not.toContain(PG_PASSWORD);
  });
});
