// A real PostgreSQL for the ledger suites: Debian's server binaries (initdb,
// pg_ctl), a temporary data folder, a free loopback port, password logins
// over TCP; run as `nobody` when the suite runs as root (the server refuses
// root). One server per test process, started on first use and stopped when
// the process exits; each caller gets a fresh database.
//
// Without the binaries the suites that need them say so and skip, unless
// $AGENTPORT_REQUIRE_PG is set (CI sets it): then they fail.
import { SQL } from "bun";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const PG_USER = "agentport";
export const PG_PASSWORD = "s3cret-pw-for-the-ledger-tests";

export interface Postgres {
  port: number;
  /** A new, empty database: its URL (with the password). */
  fresh(): Promise<string>;
  /** The admin connection (to the `postgres` database). */
  admin: SQL;
  /** The server's log so far, for a failing test's message. */
  log(): string;
}

const NOBODY = 65534;

function binDir(): string | null {
  const roots = ["/usr/lib/postgresql"];
  for (const root of roots) {
    if (!existsSync(root)) continue;
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined) return join(root, versions[0], "bin");
  }
  const initdb = Bun.which("initdb");
  return initdb === null ? null : join(initdb, "..");
}

async function freePort(): Promise<number> {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

function run(argv: string[], asNobody: boolean): void {
  const full = asNobody ? ["runuser", "-u", "nobody", "--", ...argv] : argv;
  const done = Bun.spawnSync(full, { stdout: "pipe", stderr: "pipe" });
  if (done.exitCode !== 0) throw new Error(`${argv.join(" ")}: exit ${done.exitCode}: ${done.stderr.toString().trim() || done.stdout.toString().trim()}`);
}

let started: Promise<Postgres> | null = null;

/** Why PostgreSQL cannot be had here, or null when it can. */
export function postgresMissing(): string | null {
  return binDir() === null ? "no PostgreSQL server binaries (initdb, pg_ctl): apt-get install -y postgresql" : null;
}

/** Whether the suites must run on PostgreSQL (CI), so a missing server is a failure, not a skip. */
export const PG_REQUIRED = Boolean(process.env.AGENTPORT_REQUIRE_PG);

/** Say clearly, once per file, that the PostgreSQL half of a suite is skipped. */
export function reportMissing(suite: string): boolean {
  const missing = postgresMissing();
  if (missing === null) return false;
  if (PG_REQUIRED) throw new Error(`${suite}: PostgreSQL is required ($AGENTPORT_REQUIRE_PG) but ${missing}`);
  console.warn(`${suite}: SKIPPING the PostgreSQL backend: ${missing}`);
  return true;
}

export function postgres(): Promise<Postgres> {
  started ??= start();
  return started;
}

async function start(): Promise<Postgres> {
  const bin = binDir();
  if (bin === null) throw new Error(postgresMissing() ?? "no PostgreSQL");
  const asNobody = process.getuid?.() === 0;
  const base = mkdtempSync(join(tmpdir(), "agentport-pg-"));
  const data = join(base, "data");
  const sockets = join(base, "run");
  const logFile = join(base, "server.log");
  const pwFile = join(base, "pw");
  mkdirSync(sockets);
  writeFileSync(pwFile, `${PG_PASSWORD}\n`);
  writeFileSync(logFile, "");
  if (asNobody) {
    for (const path of [base, sockets, pwFile, logFile]) chownSync(path, NOBODY, NOBODY);
  }
  chmodSync(base, 0o700);
  run([join(bin, "initdb"), "-D", data, "-U", PG_USER, `--pwfile=${pwFile}`, "--auth-host=scram-sha-256", "--auth-local=trust", "-E", "UTF8", "--no-sync"], asNobody);
  const port = await freePort();
  const options = `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off`;
  run([join(bin, "pg_ctl"), "-D", data, "-l", logFile, "-o", options, "-w", "-t", "60", "start"], asNobody);
  const stop = () => {
    try {
      run([join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop"], asNobody);
    } catch {
      // already gone
    }
    rmSync(base, { recursive: true, force: true });
  };
  process.on("exit", stop);
  const url = (db: string) => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${db}`;
  const admin = new SQL(url("postgres"), { max: 2 });
  let n = 0;
  return {
    port,
    admin,
    async fresh() {
      const name = `ledger_${process.pid}_${++n}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      return url(name);
    },
    log: () => Bun.spawnSync(["tail", "-n", "30", logFile]).stdout.toString(),
  };
}
