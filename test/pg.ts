// A real PostgreSQL for the ledger suites: Debian's server binaries (initdb,
// pg_ctl), a temporary data folder, a free loopback port, password logins
// over TCP; run as `nobody` when the suite runs as root (the server refuses
// root), TLS on (a self-signed certificate, so sslmode can be tried both
// ways). A suite calls usePostgres() once: the server starts on first use and
// stops after the suite's file (bun test fires no process exit handler), and a
// watchdog stops it should the test process die first. Each caller gets a
// fresh database.
//
// Without the binaries the suites that need them say so and skip, unless
// $AGENTPORT_REQUIRE_PG is set (CI sets it): then they fail.
import { afterAll } from "bun:test";
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
  /**
   * Stop the server at once (as a crash would), keeping its data; `restart`
   * starts it again on the same port. A checkpoint first: this server runs
   * with synchronous_commit off, so a crash would lose the last commits,
   * which a production server (synchronous_commit on) keeps.
   */
  halt(): Promise<void>;
  restart(): void;
  stop(): Promise<void>;
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

/** runuser, also where a PATH without the sbin folders does not look. */
function runuser(): string {
  return Bun.which("runuser") ?? ["/usr/sbin/runuser", "/sbin/runuser"].find((path) => existsSync(path)) ?? "runuser";
}

function run(argv: string[], asNobody: boolean): void {
  const full = asNobody ? [runuser(), "-u", "nobody", "--", ...argv] : argv;
  const done = Bun.spawnSync(full, { stdout: "pipe", stderr: "pipe" });
  if (done.exitCode !== 0)
    throw new Error(`${argv.join(" ")}: exit ${done.exitCode}: ${done.stderr.toString().trim() || done.stdout.toString().trim()}`);
}

let started: Promise<Postgres> | null = null;

/** Stop the server (the next postgres() starts another). */
export async function stopPostgres(): Promise<void> {
  const running = started;
  started = null;
  if (running !== null) await (await running).stop();
}

/** Why PostgreSQL cannot be had here, or null when it can. */
export function postgresMissing(): string | null {
  return binDir() === null ? "no PostgreSQL server binaries (initdb, pg_ctl): apt-get install -y postgresql" : null;
}

/** Whether the suites must run on PostgreSQL (CI), so a missing server is a failure, not a skip. */
export const PG_REQUIRED = Boolean(process.env.AGENTPORT_REQUIRE_PG);

/**
 * For a suite file: the server stops after it; true when its PostgreSQL half
 * is skipped (said clearly), which $AGENTPORT_REQUIRE_PG turns into a failure.
 */
export function usePostgres(suite: string): boolean {
  afterAll(stopPostgres);
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
  run(
    [
      join(bin, "initdb"),
      "-D",
      data,
      "-U",
      PG_USER,
      `--pwfile=${pwFile}`,
      "--auth-host=scram-sha-256",
      "--auth-local=trust",
      "-E",
      "UTF8",
      "--no-sync",
    ],
    asNobody,
  );
  const [cert, key] = [join(data, "server.crt"), join(data, "server.key")];
  run(
    [
      "openssl",
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      "/CN=agentport-test-ledger",
      "-keyout",
      key,
      "-out",
      cert,
    ],
    asNobody,
  );
  const port = await freePort();
  const options = `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off -c synchronous_commit=off -c ssl=on -c ssl_cert_file=${cert} -c ssl_key_file=${key}`;
  const startServer = () => run([join(bin, "pg_ctl"), "-D", data, "-l", logFile, "-o", options, "-w", "-t", "60", "start"], asNobody);
  startServer();
  const stopCommand = [
    ...(asNobody ? [runuser(), "-u", "nobody", "--"] : []),
    join(bin, "pg_ctl"),
    "-D",
    data,
    "-m",
    "immediate",
    "-w",
    "stop",
  ];
  // The watchdog: in a session of its own, it outlives a killed test process and then stops the server.
  const quoted = (argv: string[]) => argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const watchdog = `while kill -0 ${process.pid} 2>/dev/null; do sleep 2; done; ${quoted(stopCommand)} >/dev/null 2>&1; rm -rf ${quoted([base])}`;
  Bun.spawn(["setsid", "sh", "-c", watchdog], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).unref();
  const url = (db: string) => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${db}`;
  const admin = new SQL(url("postgres"), { max: 2 });
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    Bun.spawnSync(stopCommand, { stdout: "ignore", stderr: "ignore" });
    rmSync(base, { recursive: true, force: true });
  };
  process.on("exit", stop); // a script (the benchmark) that is no test suite
  let n = 0;
  return {
    port,
    admin,
    async stop() {
      await admin.close({ timeout: 0 });
      stop();
    },
    async fresh() {
      const name = `ledger_${process.pid}_${++n}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      return url(name);
    },
    log: () => Bun.spawnSync(["tail", "-n", "30", logFile]).stdout.toString(),
    async halt() {
      await admin.unsafe("CHECKPOINT");
      Bun.spawnSync(stopCommand, { stdout: "ignore", stderr: "ignore" });
    },
    restart: startServer,
  };
}
