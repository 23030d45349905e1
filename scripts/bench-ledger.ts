/**
 * bench-ledger.ts — the ledger on either engine: how long one declare takes
 * (a committed transaction, before any agent starts), and 8 processes × 200
 * declares at once on one fresh ledger.
 *
 * Run by hand (not part of the test suite):
 *   bun run scripts/bench-ledger.ts [--declares 500] [--procs 8] [--each 200] [--postgres]
 *
 * --postgres: a fresh database of the PostgreSQL test/pg.ts starts (Debian's
 * server binaries, loopback TCP, password login), else a SQLite file.
 * Latency: in this process, connectLedger on a fresh ledger (schema creation
 * timed apart), then --declares × declareSession, each timed alone: median,
 * p99 and max in milliseconds.
 * Concurrency: --procs processes of test/ledger-worker.ts `hammer` (the
 * worker the ledger tests use: per iteration declareSession, startPhase,
 * finishPhase) started at once on one fresh ledger; wall time, rows found,
 * and whether any "database is locked" escaped.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { connectLedger } from "../src/io/ledger.ts";
import { REPO_ROOT } from "./bench-replay.ts";
import { median, table } from "./bench-measure.ts";

export interface LedgerResult {
  openMs: number;
  declares: number;
  medianMs: number;
  p99Ms: number;
  maxMs: number;
  procs: number;
  each: number;
  wallS: number;
  rows: number;
  phases: number;
  locked: number;
  failures: string[];
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};

/** A fresh ledger's URL: a new PostgreSQL database, else undefined (the home's SQLite file). */
async function freshUrl(engine: "sqlite" | "postgres"): Promise<string | undefined> {
  if (engine === "sqlite") return undefined;
  const { postgres } = await import("../test/pg.ts");
  return (await postgres()).fresh();
}

export async function benchLedger(opts: {
  declares: number;
  procs: number;
  each: number;
  engine?: "sqlite" | "postgres";
}): Promise<LedgerResult> {
  const engine = opts.engine ?? "sqlite";
  const home = mkdtempSync(join(tmpdir(), "agentport-ledger-bench-"));
  const home2 = mkdtempSync(join(tmpdir(), "agentport-ledger-bench-"));
  try {
    const url = await freshUrl(engine);
    let t0 = performance.now();
    const ledger = await connectLedger(home, url);
    const openMs = performance.now() - t0;
    const times: number[] = [];
    for (let i = 0; i < opts.declares; i++) {
      t0 = performance.now();
      await ledger.declareSession({ agent: "claude", cwd: "/work/project", model: "sonnet", env: {} });
      times.push(performance.now() - t0);
    }
    await ledger.close();

    const worker = join(REPO_ROOT, "test", "ledger-worker.ts");
    const url2 = await freshUrl(engine);
    await (await connectLedger(home2, url2)).close(); // the fresh ledger exists before the stampede, as after a first run
    const started = performance.now();
    const env = url2 === undefined ? process.env : { ...process.env, AGENTPORT_LEDGER: url2 };
    const procs = Array.from({ length: opts.procs }, (_, i) =>
      Bun.spawn([process.execPath, worker, "hammer", home2, String(opts.each), `w${i}`], { stdout: "pipe", stderr: "pipe", env }),
    );
    const outs = await Promise.all(
      procs.map(async (p) => ({
        code: await p.exited,
        out: await new Response(p.stdout).text(),
        err: await new Response(p.stderr).text(),
      })),
    );
    const wallS = (performance.now() - started) / 1000;
    const failures = outs
      .filter((o) => o.code !== 0 || !o.out.includes(`done ${opts.each}`))
      .map((o) => `exit ${o.code}: ${o.err.trim().slice(-200)}`);
    const locked = outs.filter((o) => /database is locked|SQLITE_BUSY/i.test(o.err)).length;
    const counts = { s: 0, p: 0 };
    {
      await using check = await connectLedger(home2, url2);
      for (const s of await check.listSessions()) {
        counts.s++;
        if (s.totals.last_status !== null) counts.p += s.totals.phase_count;
      }
    }
    return {
      openMs,
      declares: opts.declares,
      medianMs: median(times),
      p99Ms: quantile(times, 0.99),
      maxMs: Math.max(...times),
      procs: opts.procs,
      each: opts.each,
      wallS,
      rows: counts.s,
      phases: counts.p,
      locked,
      failures,
    };
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(home2, { recursive: true, force: true });
  }
}

export function ledgerTable(r: LedgerResult): string {
  return table(
    ["measure", "value"],
    [
      ["open a fresh ledger (schema)", `${r.openMs.toFixed(1)} ms`],
      [`declareSession × ${r.declares}: median / p99 / max`, `${r.medianMs.toFixed(2)} / ${r.p99Ms.toFixed(2)} / ${r.maxMs.toFixed(2)} ms`],
      [
        `${r.procs} processes × ${r.each} (declare + phase start + finish)`,
        `${r.wallS.toFixed(2)} s wall, ${((r.procs * r.each) / r.wallS).toFixed(0)} sessions/s`,
      ],
      ["rows found / expected", `${r.rows} / ${r.procs * r.each} sessions, ${r.phases} finished phases`],
      ['"database is locked" escaped', r.locked === 0 ? "never" : `${r.locked} process(es)`],
      ...r.failures.map((f) => ["worker failure", f]),
    ],
  );
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      declares: { type: "string", default: "500" },
      procs: { type: "string", default: "8" },
      each: { type: "string", default: "200" },
      postgres: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log("usage: bun run scripts/bench-ledger.ts [--declares 500] [--procs 8] [--each 200] [--postgres]");
    process.exit(0);
  }
  const engine = values.postgres ? "postgres" : "sqlite";
  const r = await benchLedger({ declares: Number(values.declares), procs: Number(values.procs), each: Number(values.each), engine });
  console.log(`engine: ${engine}`);
  console.log(ledgerTable(r));
  if (r.failures.length > 0 || r.locked > 0 || r.rows !== r.procs * r.each) process.exitCode = 1;
  process.exit(); // the PostgreSQL of test/pg.ts stops on exit
}
