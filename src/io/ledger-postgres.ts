// The fleet engine: a PostgreSQL database many boxes write into, through
// Bun's built-in client. A pool sized for one process (a runner makes one
// write at a time; bon a few), connections closed when idle so a long agent
// run holds none. The schema version is kept in schema_migrations, migrations
// run under an advisory lock. A lost connection or a server restart is
// retried (the whole transaction); past the retries, and for a server that
// cannot be reached at all, LedgerUnreachable. `sslmode` in the URL is Bun's
// to honour; the URL's password never leaves this file unredacted.
import { SQL } from "bun";
import { LedgerError, LedgerUnreachable } from "./ledger-rows.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./ledger-schema.ts";
import type { Driver, Params, Statements } from "./ledger-statements.ts";
import { redactSecretOf, redactUrl } from "./ledger-url.ts";

const POOL = { max: 2, idleTimeout: 30, connectionTimeout: 10 };
/** Pauses between attempts after a lost connection: about 15 s in all, enough for a restart or a failover. */
const BACKOFF_MS = [50, 200, 500, 1000, 2000, 4000, 7000];
/** Any constant: the key of the lock migrations run under. */
const MIGRATION_LOCK = 42170017;

const LOST = new Set([
  "ERR_POSTGRES_CONNECTION_CLOSED",
  "ERR_POSTGRES_CONNECTION_FAILED",
  "ERR_POSTGRES_CONNECTION_REFUSED",
  "ERR_POSTGRES_CONNECTION_TIMEOUT",
  "ERR_POSTGRES_IDLE_TIMEOUT",
  "ERR_POSTGRES_LIFETIME_TIMEOUT",
]);
// serialization failure, deadlock, the server shutting down or starting, connection exceptions, too many connections
const RETRIED_STATES = new Set(["40001", "40P01", "57P01", "57P02", "57P03", "08000", "08001", "08003", "08004", "08006", "53300"]);

type Failure = { code?: string; errno?: string; message?: string; detail?: string };

/** A lost connection, or a server state worth another try (the whole statement or transaction). */
export function retried(error: unknown): boolean {
  const e = error as Failure;
  return (e.code !== undefined && LOST.has(e.code)) || (e.errno !== undefined && RETRIED_STATES.has(e.errno));
}

/** `$name` placeholders as PostgreSQL's `$1`, and the order of the names. */
const compiled = new Map<string, { text: string; names: string[] }>();
function compile(sql: string): { text: string; names: string[] } {
  let found = compiled.get(sql);
  if (found === undefined) {
    const names: string[] = [];
    const text = sql.replace(/\$([A-Za-z_][A-Za-z0-9_]*)/g, (_m, name: string) => {
      let at = names.indexOf(name);
      if (at < 0) at = names.push(name) - 1;
      return `$${at + 1}`;
    });
    found = { text, names };
    compiled.set(sql, found);
  }
  return found;
}

function bind(sql: string, params: Params): [string, (string | number | null)[]] {
  const { text, names } = compile(sql);
  return [
    text,
    names.map((name) => {
      if (!Object.hasOwn(params, name)) throw new Error(`ledger statement: no value for $${name}`);
      return params[name] ?? null;
    }),
  ];
}

class Runner implements Statements {
  constructor(protected readonly sql: SQL) {}

  async all<T>(statement: string, params: Params = {}): Promise<T[]> {
    const [text, values] = bind(statement, params);
    return [...(await this.sql.unsafe<T[]>(text, values))];
  }

  async get<T>(statement: string, params: Params = {}): Promise<T | null> {
    return (await this.all<T>(statement, params))[0] ?? null;
  }

  async run(statement: string, params: Params = {}): Promise<number> {
    const [text, values] = bind(statement, params);
    return (await this.sql.unsafe(text, values)).affectedRows;
  }
}

class PostgresDriver implements Driver {
  readonly forUpdate = " FOR UPDATE";
  readonly where: string;
  private readonly outside: Runner;

  constructor(
    private readonly sql: SQL,
    private readonly url: string,
  ) {
    this.where = redactUrl(url);
    this.outside = new Runner(sql);
  }

  all<T>(statement: string, params?: Params): Promise<T[]> {
    return this.retrying(() => this.outside.all<T>(statement, params));
  }

  get<T>(statement: string, params?: Params): Promise<T | null> {
    return this.retrying(() => this.outside.get<T>(statement, params));
  }

  run(statement: string, params?: Params): Promise<number> {
    return this.retrying(() => this.outside.run(statement, params));
  }

  transaction<T>(body: (tx: Statements, retry: boolean) => Promise<T>): Promise<T> {
    let attempts = 0;
    return this.retrying(() => this.sql.begin((tx) => body(new Runner(tx), attempts++ > 0)) as Promise<T>);
  }

  async integrityCheck(): Promise<string> {
    await this.get(`SELECT 1 AS one`);
    return "ok"; // the server keeps its own integrity; reaching it is what can fail
  }

  schemaVersion(): Promise<number> {
    return this.retrying(() => currentVersion(this.sql));
  }

  async close(): Promise<void> {
    await this.sql.close({ timeout: 5 });
  }

  private async retrying<T>(attempt: () => Promise<T>): Promise<T> {
    for (let tries = 0; ; tries++) {
      try {
        return await attempt();
      } catch (error) {
        const pause = BACKOFF_MS[tries];
        if (!retried(error)) throw failure(error, this.url);
        if (pause === undefined)
          throw new LedgerUnreachable(`the ledger ${this.where} is unreachable: ${describe(error, this.url)}`, { cause: error });
        await Bun.sleep(pause + Math.random() * pause);
      }
    }
  }
}

/** Connect, and migrate forward: a server that cannot be reached now is refused at once (the run has not started). */
export async function openPostgres(url: string): Promise<Driver> {
  const sql = new SQL(url, { ...POOL, onclose: () => {} });
  try {
    await migrate(sql, redactUrl(url));
    return new PostgresDriver(sql, url);
  } catch (error) {
    await sql.close({ timeout: 0 }).catch(() => {});
    if (error instanceof LedgerError) throw error;
    if (retried(error))
      throw new LedgerUnreachable(`the ledger ${redactUrl(url)} is unreachable: ${describe(error, url)}`, { cause: error });
    throw new LedgerError(`cannot open the ledger ${redactUrl(url)}: ${describe(error, url)}`, { cause: error });
  }
}

async function currentVersion(sql: SQL): Promise<number> {
  try {
    const [row] = await sql.unsafe<{ version: number | null }[]>(`SELECT max(version) AS version FROM schema_migrations`);
    return Number(row?.version ?? 0);
  } catch (error) {
    if ((error as Failure).errno === "42P01") return 0; // no such table: a fresh database
    throw error;
  }
}

function refuseNewer(version: number, where: string): void {
  if (version > SCHEMA_VERSION) {
    throw new LedgerError(
      `the ledger ${where} has schema version ${version}, newer than this agentport knows (${SCHEMA_VERSION}): upgrade agentport`,
    );
  }
}

async function migrate(sql: SQL, where: string): Promise<void> {
  const seen = await currentVersion(sql);
  refuseNewer(seen, where);
  if (seen === SCHEMA_VERSION) return;
  await sql.begin(async (tx) => {
    await tx.unsafe(`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`);
    const [found] = await tx.unsafe<{ versions: string | null; sessions: string | null }[]>(
      `SELECT to_regclass('schema_migrations')::text AS versions, to_regclass('sessions')::text AS sessions`,
    );
    if (!found?.versions && found?.sessions)
      throw new LedgerError(`${where} has a sessions table but no schema_migrations: not an agentport ledger`);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`);
    // Re-read under the lock: another opener may have migrated meanwhile.
    for (let version = await currentVersion(tx); version < SCHEMA_VERSION; version++) {
      refuseNewer(version, where);
      await tx.unsafe(MIGRATIONS[version]!.postgres);
      await tx.unsafe(`INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`, [version + 1, new Date().toISOString()]);
    }
  });
}

function describe(error: unknown, url: string): string {
  const e = error as Failure;
  const text = [e.message ?? String(error), e.detail].filter(Boolean).join(": ");
  return redactSecretOf(url, `${text}${e.errno ? ` (${e.errno})` : e.code ? ` (${e.code})` : ""}`);
}

/** A server's refusal as a ledger error: a row that is already there, or anything else, named. */
function failure(error: unknown, url: string): Error {
  if (error instanceof LedgerError) return error;
  const e = error as Failure;
  if (e.errno === undefined && e.code === undefined) return error as Error; // ours, not the server's
  return new LedgerError(`the ledger ${redactUrl(url)}: ${describe(error, url)}`, { cause: error });
}
