// The embedded engine: one SQLite file in agentport's home, in WAL mode, its
// schema version in PRAGMA user_version. Writers in other processes queue on
// the busy timeout (BEGIN IMMEDIATE); writers in this process queue on a lock,
// since an asynchronous transaction would otherwise let another one in.
import { Database, SQLiteError } from "bun:sqlite";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { LedgerError } from "./ledger-rows.ts";
import { MIGRATIONS, SCHEMA_VERSION } from "./ledger-schema.ts";
import type { Driver, Params, Statements } from "./ledger-statements.ts";

const BUSY_TIMEOUT_MS = 10_000;
const BUSY_RETRIES = 3;

/** Open (creating, and migrating forward) the ledger file at `file`. */
export async function openSqlite(file: string): Promise<Driver> {
  const path = resolve(file);
  const dir = dirname(path);
  let db: Database | undefined;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Create the file ourselves so it is private; SQLite gives -wal and -shm the same mode.
    closeSync(openSync(path, "a", 0o600));
    db = new Database(path, { strict: true });
    const opened = db;
    await retryBusy(async () => {
      configure(opened);
      await migrate(opened, path);
    });
    return new SqliteDriver(opened, path);
  } catch (error) {
    db?.close();
    throw openError(error, path);
  }
}

/**
 * An existing ledger file for reading only: no folder, file, WAL switch or
 * migration. Where SQLite cannot even make the -shm a WAL reader needs (a
 * read-only or full file system), the file is read as it is on disk.
 */
export async function openSqliteReadonly(file: string): Promise<Driver> {
  const path = resolve(file);
  let db: Database | undefined;
  try {
    db = readonlyDatabase(path);
    db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const version = userVersion(db);
    refuseNewer(version, path);
    if (version < SCHEMA_VERSION) {
      // An older ledger is read with today's columns: it is migrated first, as any open does.
      db.close();
      db = undefined;
      return await openSqlite(path);
    }
    return new SqliteDriver(db, path);
  } catch (error) {
    db?.close();
    throw openError(error, path);
  }
}

function readonlyDatabase(path: string): Database {
  try {
    const db = new Database(path, { readonly: true, strict: true });
    db.query(`PRAGMA user_version`).get(); // a WAL file is only really opened by the first read
    return db;
  } catch (error) {
    // SQLITE_CANTOPEN: the folder takes no -shm. What was checkpointed is all there is to read then.
    if (!(error instanceof SQLiteError && (error.errno & 0xff) === 14) || !existsSync(path)) throw error;
    const bytes = readFileSync(path);
    // Header bytes 18 and 19 say WAL (2); an in-memory copy reads as a rollback-journal file (1).
    if (bytes.length >= 20) bytes.fill(1, 18, 20);
    return Database.deserialize(bytes, { readonly: true, strict: true });
  }
}

class SqliteDriver implements Driver {
  readonly forUpdate = "";
  /** The end of the last write transaction queued in this process. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly db: Database,
    readonly where: string,
  ) {}

  async all<T>(sql: string, params: Params = {}): Promise<T[]> {
    return this.db.query<T, [Params]>(sql).all(params);
  }

  async get<T>(sql: string, params: Params = {}): Promise<T | null> {
    return this.db.query<T, [Params]>(sql).get(params);
  }

  async run(sql: string, params: Params = {}): Promise<number> {
    return this.db.query(sql).run(params).changes;
  }

  transaction<T>(body: (tx: Statements, retry: boolean) => Promise<T>): Promise<T> {
    // A busy database never began the transaction: a retry starts afresh.
    const turn = this.queue.then(() => retryBusy(() => immediate(this.db, () => body(this, false))));
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  async integrityCheck(): Promise<string> {
    return this.db
      .query<{ integrity_check: string }, []>(`PRAGMA integrity_check`)
      .all()
      .map((r) => r.integrity_check)
      .join("\n");
  }

  async schemaVersion(): Promise<number> {
    return userVersion(this.db);
  }

  async close(): Promise<void> {
    await this.queue;
    this.db.close();
  }
}

/** One write transaction, BEGIN IMMEDIATE so concurrent writers queue on the busy timeout. */
async function immediate<T>(db: Database, body: () => T | Promise<T>): Promise<T> {
  db.query(`BEGIN IMMEDIATE`).run();
  try {
    const result = await body();
    db.query(`COMMIT`).run();
    return result;
  } catch (error) {
    if (db.inTransaction) {
      try {
        db.query(`ROLLBACK`).run();
      } catch {
        // keep the error that made us roll back
      }
    }
    throw error;
  }
}

function isBusy(error: unknown): boolean {
  // The primary code is the low byte of the extended one (SQLITE_BUSY_SNAPSHOT, ...).
  return error instanceof SQLiteError && (error.errno & 0xff) === 5;
}

/** Last resort behind busy_timeout: retry a whole transaction a few times, with jittered backoff. */
async function retryBusy<T>(attempt: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await attempt();
    } catch (error) {
      if (!isBusy(error) || tries > BUSY_RETRIES) throw error;
      await Bun.sleep(25 * 2 ** tries + Math.random() * 25);
    }
  }
}

function configure(db: Database): void {
  // busy_timeout first, so even the switch to WAL waits for other openers.
  db.run(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
  db.query(`PRAGMA journal_mode = WAL`).get();
  // In WAL, NORMAL survives a killed process; only an OS crash can lose the last commits.
  db.run(`PRAGMA synchronous = NORMAL`);
  db.run(`PRAGMA foreign_keys = ON`);
}

function userVersion(db: Database): number {
  return db.query<{ user_version: number }, []>(`PRAGMA user_version`).get()?.user_version ?? 0;
}

function refuseNewer(version: number, path: string): void {
  if (version > SCHEMA_VERSION) {
    throw new LedgerError(
      `the ledger ${path} has schema version ${version}, newer than this agentport knows (${SCHEMA_VERSION}): upgrade agentport`,
    );
  }
}

/** Apply pending migrations, each in its own transaction; safe against another process doing the same. */
async function migrate(db: Database, path: string): Promise<void> {
  for (;;) {
    const seen = userVersion(db);
    refuseNewer(seen, path);
    if (seen === SCHEMA_VERSION) return;
    await immediate(db, () => {
      const version = userVersion(db); // re-read under the write lock: another opener may have migrated
      refuseNewer(version, path);
      if (version !== seen) return;
      if (version === 0 && hasTables(db)) throw new LedgerError(`${path} is a SQLite database but not an agentport ledger`);
      db.run(MIGRATIONS[version]!.sqlite);
      db.run(`PRAGMA user_version = ${version + 1}`);
    });
  }
}

function hasTables(db: Database): boolean {
  return db.query(`SELECT 1 FROM sqlite_schema WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' LIMIT 1`).get() !== null;
}

function openError(error: unknown, path: string): Error {
  if (error instanceof LedgerError) return error;
  if (error instanceof SQLiteError && (error.errno & 0xff) === 26) {
    return new LedgerError(`${path} is not an agentport ledger: not a SQLite database`, { cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new LedgerError(`cannot open the ledger ${path}: ${message}`, { cause: error });
}
