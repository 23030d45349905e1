// A real PostgreSQL for the ledger suites: Debian's server binaries (initdb,
// pg_ctl), a temporary data folder, a free loopback port, password logins
// over TCP; run as `nobody` when the suite runs as root (the server refuses
// root), TLS on (a self-signed certificate, so sslmode can be tried both
// ways). One server is shared by every suite of one `bun test` run (its
// --parallel workers too): the first suite to ask starts it, the others find
// it, and a watchdog stops it when that run's process is gone. Each caller
// gets a fresh database. A suite that stops or restarts the server itself
// asks for its own (usePostgres(suite, { own: true })), stopped after its file.
//
// Without the binaries the suites that need them say so and skip, unless
// $AGENTPORT_REQUIRE_PG is set (CI sets it): then they fail.
import { afterAll } from "bun:test";
import { SQL } from "bun";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
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

/** Close this file's connection (and stop the server when it is this file's own; the next postgres() starts another). */
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
 * For a suite file: its connection closes after it (its own server stops); true when its PostgreSQL half
 * is skipped (said clearly), which $AGENTPORT_REQUIRE_PG turns into a failure.
 */
export function usePostgres(suite: string, opts: { own?: boolean } = {}): boolean {
  ownWanted = opts.own === true;
  afterAll(stopPostgres);
  const missing = postgresMissing();
  if (missing === null) return false;
  if (PG_REQUIRED) throw new Error(`${suite}: PostgreSQL is required ($AGENTPORT_REQUIRE_PG) but ${missing}`);
  console.warn(`${suite}: SKIPPING the PostgreSQL backend: ${missing}`);
  return true;
}

/** Whether this file asked for a server of its own (usePostgres(suite, { own: true })). */
let ownWanted = false;

/**
 * The run's shared server (a fresh database per fresh()), or, in a file that
 * asked for its own, a server of that file's alone: one it may halt and restart.
 */
export function postgres(): Promise<Postgres> {
  started ??= ownWanted ? ownServer() : sharedServer();
  return started;
}

interface Launched {
  logFile: string;
  stopCommand: string[];
  startServer: () => void;
  /** Take a free port and start the server on it. */
  listen: () => Promise<number>;
}

/** initdb, a certificate and pg_ctl start in `base` (made, owned by the server's user). */
function launch(bin: string, base: string): Launched {
  const asNobody = process.getuid?.() === 0;
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
  let port = 0;
  const startServer = () => {
    const options = `-p ${port} -k ${sockets} -c listen_addresses=127.0.0.1 -c max_connections=500 -c fsync=off -c synchronous_commit=off -c ssl=on -c ssl_cert_file=${cert} -c ssl_key_file=${key}`;
    run([join(bin, "pg_ctl"), "-D", data, "-l", logFile, "-o", options, "-w", "-t", "60", "start"], asNobody);
  };
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
  return {
    logFile,
    stopCommand,
    startServer,
    async listen(): Promise<number> {
      port = await freePort();
      startServer();
      return port;
    },
  };
}

/** In a session of its own, it outlives the process `pid` and then stops the server and removes `base`. */
function watchdog(pid: number, stopCommand: string[], base: string): void {
  const quoted = (argv: string[]) => argv.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const script = `while kill -0 ${pid} 2>/dev/null; do sleep 2; done; ${quoted(stopCommand)} >/dev/null 2>&1; rm -rf ${quoted([base])}`;
  Bun.spawn(["setsid", "--fork", "sh", "-c", script], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).unref();
}

const url = (port: number, db: string) => `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${db}`;

/** The handle on a running server; `stopServer` is what this file's stop() does to it beyond closing its connection. */
function handle(port: number, logFile: string, l: Pick<Launched, "stopCommand" | "startServer">, stopServer: () => void): Postgres {
  const admin = new SQL(url(port, "postgres"), { max: 2 });
  return {
    port,
    admin,
    async stop() {
      await admin.close({ timeout: 0 });
      stopServer();
    },
    async fresh() {
      // Unique across the workers and the files one worker runs in turn (each file its own module state).
      const name = `ledger_${process.pid}_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
      await admin.unsafe(`CREATE DATABASE ${name}`);
      return url(port, name);
    },
    log: () => Bun.spawnSync(["tail", "-n", "30", logFile]).stdout.toString(),
    async halt() {
      await admin.unsafe("CHECKPOINT");
      Bun.spawnSync(l.stopCommand, { stdout: "ignore", stderr: "ignore" });
    },
    restart: l.startServer,
  };
}

function binOrThrow(): string {
  const bin = binDir();
  if (bin === null) throw new Error(postgresMissing() ?? "no PostgreSQL");
  return bin;
}

async function ownServer(): Promise<Postgres> {
  const base = mkdtempSync(join(tmpdir(), "agentport-pg-"));
  const launched = launch(binOrThrow(), base);
  const port = await launched.listen();
  watchdog(process.pid, launched.stopCommand, base);
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    Bun.spawnSync(launched.stopCommand, { stdout: "ignore", stderr: "ignore" });
    rmSync(base, { recursive: true, force: true });
  };
  process.on("exit", stop); // a script (the benchmark) that is no test suite
  return handle(port, launched.logFile, launched, stop);
}

/** The process the shared server lives as long as: a --parallel worker's coordinator, or this process. */
function runOwner(): number {
  const self = readFileSync("/proc/self/cmdline", "utf8").split("\0");
  return self.includes("--test-worker") ? process.ppid : process.pid;
}

/** The owner's start time (field 22 of its stat), so a folder left by an earlier process of a reused pid is never taken for this run's. */
function startTicks(pid: number): string {
  return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[19]!;
}

interface SharedInfo {
  port: number;
  logFile: string;
  stopCommand: string[];
}

/**
 * The run's one server. The first caller wins the folder (mkdir is atomic),
 * starts the server and writes info.json whole (a rename); the others wait for it.
 */
async function sharedServer(): Promise<Postgres> {
  const bin = binOrThrow();
  const owner = runOwner();
  const base = join(tmpdir(), `agentport-pg-run-${owner}-${startTicks(owner)}`);
  const info = join(base, "info.json");
  let won = false;
  try {
    mkdirSync(base);
    won = true;
  } catch {
    // Another suite of this run starts it.
  }
  if (won) {
    const launched = launch(bin, base);
    const port = await launched.listen();
    watchdog(owner, launched.stopCommand, base);
    writeFileSync(`${info}.tmp`, JSON.stringify({ port, logFile: launched.logFile, stopCommand: launched.stopCommand }));
    renameSync(`${info}.tmp`, info);
    if (owner === process.pid) process.on("exit", () => Bun.spawnSync(launched.stopCommand, { stdout: "ignore", stderr: "ignore" }));
  }
  for (const until = performance.now() + 120_000; !existsSync(info); await Bun.sleep(50)) {
    if (performance.now() > until) throw new Error(`the run's shared PostgreSQL in ${base} did not start within 120 s`);
  }
  const shared = JSON.parse(readFileSync(info, "utf8")) as SharedInfo;
  const unsupported = () => {
    throw new Error(
      "the shared PostgreSQL is not stopped or restarted by one suite: ask for its own with usePostgres(suite, { own: true })",
    );
  };
  return {
    ...handle(shared.port, shared.logFile, { stopCommand: shared.stopCommand, startServer: unsupported }, () => {}),
    halt: async () => unsupported(),
  };
}
