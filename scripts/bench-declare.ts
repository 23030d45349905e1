/**
 * bench-declare.ts — the ledger writes of a run alone, under N concurrent
 * writers on one SQLite home (issue #30: is the declare slow, or the start of
 * N processes on few cores?).
 *
 * Run by hand (not part of the test suite):
 *   bun run scripts/bench-declare.ts [--n 1,16,64,128]
 *
 * For each N: a fresh home (the ledger created first), then N processes (this
 * script in --worker mode) that each open the ledger and wait at a barrier.
 * When all are ready they write at once, as a run does before its agent
 * starts: declareSession, startPhase, setPhaseAgent; then, at a second
 * barrier, all at once, finishPhase. Every write is timed alone in its process
 * (performance.now around the awaited call: the BEGIN IMMEDIATE queue on
 * busy_timeout, the statement, the commit). Both barriers make it the worst
 * case: in a real burst the writes are spread by the processes' start.
 * p50 / p99 / max in ms, and the load average beside them.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { connectLedger } from "../src/io/ledger.ts";
import { quantile } from "./bench-density-procs.ts";
import { table } from "./bench-measure.ts";

interface Times {
  declare: number;
  start: number;
  agent: number;
  finish: number;
  /** CPU ms this process spent in the declare: what the wall beyond it waited (on the lock, or for a core). */
  declareCpu: number;
}

async function barrier(file: string): Promise<void> {
  while (!existsSync(file)) await Bun.sleep(5);
}

async function timed(write: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await write();
  return performance.now() - t;
}

/** One writer: open, ready, (go) the three writes before an agent, (go) the finish; its times on stdout. */
async function worker(home: string, dir: string, i: number): Promise<void> {
  await using ledger = await connectLedger(home);
  writeFileSync(join(dir, `ready-${i}`), "");
  await barrier(join(dir, "go"));
  let id = "";
  let phaseId = 0;
  const t: Times = { declare: 0, start: 0, agent: 0, finish: 0, declareCpu: 0 };
  const cpu = process.cpuUsage();
  t.declare = await timed(async () => {
    id = (await ledger.declareSession({ agent: "claude", cwd: dir, title: `run ${i}` })).id;
  });
  const used = process.cpuUsage(cpu);
  t.declareCpu = (used.user + used.system) / 1000;
  t.start = await timed(async () => {
    phaseId = (await ledger.startPhase({ sessionId: id, kind: "run", runDir: join(dir, `run-${i}`) })).id;
  });
  t.agent = await timed(() => ledger.setPhaseAgent(phaseId, { pgid: process.pid, start: "1" }));
  writeFileSync(join(dir, `started-${i}`), "");
  await barrier(join(dir, "finish"));
  t.finish = await timed(() =>
    ledger.finishPhase(phaseId, {
      status: "completed",
      ok: true,
      tokens: { input: 100, output: 20, cache_read: 0, cache_write: 0 },
      costMicroUsd: 10,
      seconds: 20,
      stopReason: "end_turn",
      failure: null,
      details: { turns: 1 },
    }),
  );
  console.log(JSON.stringify(t));
}

async function allThere(dir: string, prefix: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) while (!existsSync(join(dir, `${prefix}-${i}`))) await Bun.sleep(20);
}

async function burst(n: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), "agentport-declare-"));
  try {
    const home = join(dir, "home");
    await (await connectLedger(home)).close();
    const procs = Array.from({ length: n }, (_, i) =>
      Bun.spawn([process.execPath, import.meta.path, "--worker", home, dir, String(i)], { stdout: "pipe", stderr: "inherit" }),
    );
    await allThere(dir, "ready", n);
    const load = loadavg()[0]!.toFixed(1);
    writeFileSync(join(dir, "go"), "");
    await allThere(dir, "started", n);
    writeFileSync(join(dir, "finish"), "");
    const times = (await Promise.all(procs.map((p) => new Response(p.stdout).text())))
      .map((out) => out.trim())
      .filter(Boolean)
      .map((out) => JSON.parse(out) as Times);
    const f = (k: keyof Times) => {
      const xs = times.map((t) => t[k]);
      return `${quantile(xs, 0.5)!.toFixed(1)} / ${quantile(xs, 0.99)!.toFixed(1)} / ${Math.max(...xs).toFixed(1)}`;
    };
    return [String(n), `${times.length}/${n}`, f("declare"), f("declareCpu"), f("start"), f("agent"), f("finish"), load];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    args: Bun.argv.slice(2),
    options: { n: { type: "string", default: "1,16,64,128" }, worker: { type: "boolean" } },
    allowPositionals: true,
  });
  if (values.worker) return worker(positionals[0]!, positionals[1]!, Number(positionals[2]));
  const rows: string[][] = [];
  for (const n of values.n.split(",").map(Number)) rows.push(await burst(n));
  console.log(table(["N", "writers", "declare ms p50/p99/max", "its cpu", "startPhase", "setPhaseAgent", "finish", "load"], rows));
}

await main();
