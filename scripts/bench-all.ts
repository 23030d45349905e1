/**
 * bench-all.ts — every benchmark, one report: `bun run bench`.
 *
 *   bun run bench                           full size (minutes): 200 MiB claude and pi streams of
 *                                           big records (--shape heavy), a 100 MiB stream of short
 *                                           lines, a 300 MiB line, a 1 GiB stream, `agentport run`
 *                                           on each, start, ledger, overhead
 *   bun run bench -- --repeat 2             run the big ones (throughput, memory) twice, keep the better median
 *   bun run bench -- --quick                small sizes, to check the scripts work (figures mean little)
 *   bun run bench -- --only throughput,memory,run,start,ledger,overhead   --out bench.md
 *
 * The streams are kept in $AGENTPORT_BENCH_DIR (default /tmp/agentport-bench).
 *
 * Never part of the test suite (no timed assertions anywhere): run it by hand
 * on a quiet machine, after `bun run scripts/build.ts`. The pieces run alone
 * too: bench-replay.ts, bench-memory.ts, bench-start.ts, bench-ledger.ts,
 * bench-overhead.ts (see their headers). Prints the details as they come,
 * then markdown tables for the README (and --out FILE writes them).
 */
import { cpus, freemem, loadavg, totalmem } from "node:os";
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { agentportBin, beforeBin, benchThroughput, throughputTable, type ThroughputResult, type ThroughputRow } from "./bench-replay.ts";
import { benchMemory, memoryTable, type MemoryResult } from "./bench-memory.ts";
import { benchStart, timingTable, type Timing } from "./bench-start.ts";
import { benchLedger, ledgerTable, type LedgerResult } from "./bench-ledger.ts";
import { benchOverhead, overheadTable, type OverheadRow } from "./bench-overhead.ts";
import { benchRunMemory, runMemoryTable, type RunMemoryRow } from "./bench-run.ts";

const { values } = parseArgs({
  args: Bun.argv.slice(2),
  options: {
    quick: { type: "boolean", default: false },
    repeat: { type: "string", default: "1" },
    runs: { type: "string" },
    only: { type: "string", default: "throughput,memory,run,start,ledger,overhead" },
    out: { type: "string" },
    seed: { type: "string", default: "1" },
    help: { type: "boolean", short: "h" },
  },
});
if (values.help) {
  console.log(
    "usage: bun run bench [-- --quick] [--repeat 2] [--runs 3] [--only throughput,memory,run,start,ledger,overhead] [--out FILE] [--seed 1]",
  );
  process.exit(0);
}

const quick = values.quick;
const repeat = Math.max(1, Number(values.repeat));
const only = new Set(values.only.split(",").map((s) => s.trim()));
const seed = Number(values.seed);
const size = {
  streamMb: quick ? 20 : 200,
  shortMb: quick ? 10 : 100,
  lineMb: quick ? 20 : 300,
  bigStreamMb: quick ? 64 : 1024,
  runs: Number(values.runs ?? (quick ? 1 : 3)),
  startRuns: quick ? 5 : 30,
  selftestRuns: quick ? 1 : 5,
  declares: quick ? 100 : 1000,
  overheadRuns: quick ? 2 : 30,
};

const f = (x: number | null | undefined, d = 1) => (x === null || x === undefined || !Number.isFinite(x) ? "n/a" : x.toFixed(d));
const banner = (s: string) => console.log(`\n=== ${s} ===`);

function machine(): string {
  const cpu = cpus();
  let kernel = "";
  try {
    kernel = readFileSync("/proc/sys/kernel/osrelease", "utf8").trim();
  } catch {
    kernel = process.platform;
  }
  const node = Bun.which("node") ? Bun.spawnSync(["node", "--version"]).stdout.toString().trim() : "none";
  return `${cpu[0]?.model ?? "?"} × ${cpu.length}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM (${(freemem() / 2 ** 30).toFixed(0)} free), Linux ${kernel}, bun ${Bun.version}, node ${node}, load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(" ")} at start, ${new Date().toISOString().slice(0, 16)}Z`;
}

/** Per contender, the better (lower) median over repeats; ratios recomputed. */
function bestOf(results: ThroughputResult[]): ThroughputResult {
  const first = results[0]!;
  const rows: ThroughputRow[] = first.rows.map((row) => {
    const all = results.map((r) => r.rows.find((x) => x.name === row.name)!).filter((x) => x && !x.failed && Number.isFinite(x.medianS));
    const best = all.sort((a, b) => a.medianS - b.medianS)[0] ?? row;
    return { ...best, runs: all.flatMap((x) => x.runs), cpuRuns: all.flatMap((x) => x.cpuRuns) };
  });
  const of = (prefix: string) => rows.find((r) => r.name.startsWith(prefix));
  const [ap, fl] = [of("agentport"), of("floor")];
  for (const r of rows) {
    r.speedup = r.medianS / (ap?.medianS ?? NaN);
    r.overFloor = r.medianS / (fl?.medianS ?? NaN);
    r.cpuSpeedup = r.medianCpuS / (ap?.medianCpuS ?? NaN);
    r.cpuOverFloor = r.medianCpuS / (fl?.medianCpuS ?? NaN);
  }
  return { ...first, rows, failed: results.some((r) => r.failed) };
}

const header = machine();
console.log(`machine: ${header}`);
console.log(
  `binary: ${agentportBin()}${repeat > 1 ? `; big benchmarks run ${repeat}× and the better median kept` : ""}${quick ? "; QUICK sizes" : ""}`,
);

const throughput: ThroughputResult[] = [];
const runs: RunMemoryRow[] = [];
const memory: { label: string; r: MemoryResult }[] = [];
let start: Timing[] = [];
let ledger: LedgerResult | null = null;
let overhead: OverheadRow[] = [];

if (only.has("throughput")) {
  for (const [agent, shape, mb] of [
    ["claude", "heavy", size.streamMb],
    ["pi", "heavy", size.streamMb],
    ["claude", "short", size.shortMb],
  ] as const) {
    banner(`throughput: ${agent} ${shape} ${mb} MiB`);
    const reps: ThroughputResult[] = [];
    for (let i = 0; i < repeat; i++) reps.push(await benchThroughput({ agent, shape, mb, runs: size.runs, seed, quiet: true }));
    const t = bestOf(reps);
    throughput.push(t);
    console.log(throughputTable(t));
  }
}

if (only.has("memory")) {
  for (const [label, mode, mb, neighbours] of [
    [`one ${size.lineMb} MiB line`, "bigline", size.lineMb, true],
    [`a ${size.bigStreamMb} MiB stream of big records`, "stream", size.bigStreamMb, false],
  ] as const) {
    banner(`memory: ${label}`);
    const reps: MemoryResult[] = [];
    for (let i = 0; i < repeat; i++)
      reps.push(
        await benchMemory({
          mode,
          size: mb,
          seed,
          timeoutS: quick ? 60 : 300,
          neighbours: neighbours && i === 0,
          shape: "heavy",
          neighbourTimeoutS: quick ? 60 : 120,
        }),
      );
    // The repeat with the faster agentport run; the neighbours' rows come from the first.
    const best = [...reps].sort((a, b) => a.wallS - b.wallS)[0]!;
    if (best !== reps[0]) best.rows.push(...reps[0]!.rows.filter((r) => !r[0]!.startsWith("agentport") && !r[0]!.startsWith("floor")));
    memory.push({ label, r: best });
    console.log(memoryTable(best));
    for (const n of best.notes) console.log(n);
  }
}

if (only.has("run")) {
  banner("memory: agentport run driving a fake agent that emits each stream");
  for (const [agent, mode, mb, shape, label] of [
    ["claude", "stream", size.streamMb, "heavy", `claude, ${size.streamMb} MiB of big records`],
    ["pi", "pi", size.streamMb, "heavy", `pi, ${size.streamMb} MiB of big records`],
    ["claude", "stream", size.shortMb, "short", `claude, ${size.shortMb} MiB of short lines`],
    ["claude", "bigline", size.lineMb, "short", `claude, one ${size.lineMb} MiB line`],
  ] as const) {
    runs.push(await benchRunMemory({ agent, mode, size: mb, shape, seed, label }));
    const before = beforeBin();
    if (before !== null) runs.push(await benchRunMemory({ agent, mode, size: mb, shape, seed, label: `before: ${label}`, bin: before }));
  }
  console.log(runMemoryTable(runs));
}

if (only.has("start")) {
  banner("start");
  start = await benchStart({ runs: size.startRuns, selftestRuns: size.selftestRuns });
  console.log(timingTable(start));
}

if (only.has("ledger")) {
  banner("ledger");
  ledger = await benchLedger({ declares: size.declares, procs: 8, each: 200 });
  console.log(ledgerTable(ledger));
}

if (only.has("overhead")) {
  banner("overhead");
  overhead = await benchOverhead({ runs: size.overheadRuns });
  console.log(overheadTable(overhead));
}

/* ------------------------------------------------------------- markdown */

const md: string[] = [];
md.push(`Measured on: ${header}.${repeat > 1 ? ` Throughput and memory ran ${repeat}× each; the better median is kept.` : ""}`);
/** "2.10× faster" / "1.25× slower": agentport against a contender, from time ratios. */
const faster = (speedup: number) =>
  !Number.isFinite(speedup)
    ? "n/a"
    : speedup >= 1
      ? `agentport ${speedup.toFixed(2)}× faster`
      : `agentport ${(1 / speedup).toFixed(2)}× slower`;
const verdict = (ok: boolean | null) => (ok === null ? "" : ok ? " ✓" : " ✗");
const rowOf = (t: ThroughputResult | undefined, prefix: string) => t?.rows.find((r) => r.name.startsWith(prefix));
const heavy = (agent: "claude" | "pi") => throughput.find((t) => t.agent === agent && t.shape === "heavy");
const short = throughput.find((t) => t.shape === "short");
const RSS_TARGET_MIB = 64;

// Issue 16's table: every reader on the same two streams of big records, in the same run.
const [claude, pi] = [heavy("claude"), heavy("pi")];
if (claude || pi) {
  md.push("");
  md.push(
    `| reader (frame + parse + count) | claude ${f(claude?.mib, 0)} MiB | pi ${f(pi?.mib, 0)} MiB | peak RSS (claude / pi) | private memory (claude / pi) |`,
  );
  md.push("|---|---|---|---|---|");
  for (const [prefix, name] of [
    ["floor", "LF count only (bun, no decoding) — the floor"],
    ["pi reader", "pi's own reader, run under bun + JSON.parse"],
    ["node", "node readline + JSON.parse (the Claude Agent SDK's way)"],
    ["agentport", "**agentport replay --json**"],
  ] as const) {
    const [c, p] = [rowOf(claude, prefix), rowOf(pi, prefix)];
    const bold = (x: string) => (prefix === "agentport" ? `**${x}**` : x);
    const speed = (r: ThroughputRow | undefined) => bold(`${f(r?.mibPerS, 0)} MiB/s`) + ` (${f(r?.mibPerCpuS, 0)} per CPU-s)`;
    md.push(
      `| ${name} | ${speed(c)} | ${speed(p)} | ${bold(`${f(c?.peakMiB, 0)} / ${f(p?.peakMiB, 0)} MiB`)} | ${f(c?.privateMiB, 0)} / ${f(p?.privateMiB, 0)} MiB |`,
    );
  }
}

md.push("");
md.push("| goal | result | target |");
md.push("|---|---|---|");
for (const t of [claude, pi, short]) {
  if (t === undefined) continue;
  const [ap, node, piReader, floor] = ["agentport", "node", "pi reader", "floor"].map((prefix) => rowOf(t, prefix));
  const label = `${t.agent}, ${f(t.mib, 0)} MiB of ${t.shape === "heavy" ? "big records" : "short lines"}`;
  const goal = (wall: number, cpuRatio: number, min: number) =>
    `${verdict(wall >= min)} (by CPU time: ${f(cpuRatio, 2)}${verdict(cpuRatio >= min)})`;
  if (piReader)
    md.push(
      `| replay throughput, ${label}: vs pi's reader (${f(piReader.mibPerS, 0)} MiB/s) | ${f(ap?.mibPerS, 0)} MiB/s, ${faster(piReader.speedup)} | ${t.shape === "heavy" ? "≥ 2.5×" : "no regression (≥ 1×)"}${goal(piReader.speedup, piReader.cpuSpeedup, t.shape === "heavy" ? 2.5 : 1)} |`,
    );
  if (node)
    md.push(
      `| … vs node readline + JSON.parse (${f(node.mibPerS, 0)} MiB/s) | ${faster(node.speedup)} (by CPU time: ${f(node.cpuSpeedup, 2)}×) | |`,
    );
  if (floor && ap)
    md.push(
      `| … share of the LF-count floor (${f(floor.mibPerS, 0)} MiB/s) | ${f(ap.mibPerS / floor.mibPerS, 2)} | ${t.shape === "heavy" ? `≥ 0.4${goal(ap.mibPerS / floor.mibPerS, 1 / ap.cpuOverFloor, 0.4)}` : ""} |`,
    );
  if (ap)
    md.push(
      `| peak RSS, replay of ${label} | ${f(ap.peakMiB)} MiB (private ${f(ap.privateMiB)} MiB) | ≤ ${RSS_TARGET_MIB} MiB${verdict(ap.peakMiB !== null ? ap.peakMiB <= RSS_TARGET_MIB : null)} |`,
    );
}
for (const { label, r } of memory) {
  md.push(
    `| peak RSS, replay of ${label} | ${f(r.rssMiB)} MiB, private ${f(r.privateMiB)} MiB (baseline ${f(r.baseRssMiB)} MiB on a tiny stream) | ≤ ${RSS_TARGET_MIB} MiB${verdict(r.rssMiB !== null ? r.rssMiB <= RSS_TARGET_MIB : null)} |`,
  );
  md.push(
    `| time, replay of ${label} | ${f(r.wallS, 2)} s = ${f(r.wallS / r.floorS, 2)}× the LF-count floor (${f(r.floorS, 2)} s) | ${label.startsWith("one") ? `≤ 2× floor${verdict(r.wallS / r.floorS <= 2)}` : ""} |`,
  );
  for (const row of r.rows.filter((x) => x[0]!.startsWith("node") || x[0]!.startsWith("pi"))) {
    md.push(`| … ${row[0]} on the same | ${row[1]} s, ${row[2]} MiB peak: ${row[4]} | |`);
  }
}
for (const r of runs) {
  md.push(
    `| peak RSS, \`agentport run\` driving a fake agent emitting ${r.label} | ${f(r.rssMiB)} MiB, private ${f(r.privateMiB)} MiB (${f(r.wallS, 1)} s)${r.failed ? ` FAILED: ${r.failed}` : ""} | ≤ ${RSS_TARGET_MIB} MiB${verdict(r.rssMiB !== null && !r.failed ? r.rssMiB <= RSS_TARGET_MIB : false)} |`,
  );
}
for (const o of overhead) {
  const events = o.streamKiB >= 1024 ? `${f(o.streamKiB / 1024, 1)} MiB` : `${f(o.streamKiB, 0)} KiB`;
  const who = o.before ? "before: " : "";
  md.push(
    `| ${who}overhead of \`agentport run --agent ${o.agent}\` over the fake ${o.agent} alone, \`${o.scenario}\` (${events} of events, ${o.rounds} rounds) | +${f(o.overheadMs, 0)} ms median, +${f(o.overheadP90Ms, 0)} ms p90 (${f(o.directMs, 0)} → ${f(o.drivenMs, 0)} ms; CPU ${f(o.directCpuMs, 0)} → ${f(o.drivenCpuMs, 0)} ms) | ≤ 20 ms${verdict(Number.isFinite(o.overheadMs) ? o.overheadMs <= 20 : null)} |`,
  );
}
for (const s of start) {
  const target = s.name.endsWith("--version") ? 30 : 3000;
  md.push(
    `| wall time, \`${s.name}\` | ${f(s.medianMs, 0)} ms median (${s.runs} runs, ${s.tool}) | ${target >= 1000 ? `${target / 1000} s` : `${target} ms`}${verdict(s.failed ? false : s.medianMs <= target)} |`,
  );
}
if (ledger) {
  md.push(`| ledger: one declare (committed) | ${f(ledger.medianMs, 2)} ms median, ${f(ledger.p99Ms, 2)} ms p99 | |`);
  md.push(
    `| ledger: 8 processes × 200 (declare + phase) at once | ${f(ledger.wallS, 2)} s, ${ledger.rows}/${ledger.procs * ledger.each} rows, "database is locked": ${ledger.locked === 0 && ledger.failures.length === 0 ? "never" : "YES"} | every row, no lock error${verdict(ledger.rows === ledger.procs * ledger.each && ledger.locked === 0)} |`,
  );
}

if (throughput.length > 0) {
  md.push("");
  md.push(
    "| stream | contender | median s | MiB/s | median CPU s | MiB per CPU-s | peak RSS MiB | private MiB | time ÷ agentport's (CPU) | time ÷ floor's (CPU) |",
  );
  md.push("|---|---|---|---|---|---|---|---|---|---|");
  for (const t of throughput) {
    for (const r of t.rows)
      md.push(
        `| ${t.agent} ${t.shape} ${f(t.mib, 0)} MiB | ${r.name}${r.failed ? " (FAILED)" : ""} | ${f(r.medianS, 3)} | ${f(r.mibPerS, 0)} | ${f(r.medianCpuS, 3)} | ${f(r.mibPerCpuS, 0)} | ${f(r.peakMiB)} | ${f(r.privateMiB)} | ${f(r.speedup, 2)} (${f(r.cpuSpeedup, 2)}) | ${f(r.overFloor, 2)} (${f(r.cpuOverFloor, 2)}) |`,
      );
  }
}

const commands = [
  "bun run scripts/build.ts",
  `bun run bench${repeat > 1 ? ` -- --repeat ${repeat}` : ""}`,
  "# or one at a time:",
  `bun run scripts/bench-replay.ts --agent claude --shape heavy --mb ${size.streamMb} --runs ${size.runs}`,
  `bun run scripts/bench-replay.ts --agent pi --shape heavy --mb ${size.streamMb} --runs ${size.runs}`,
  `bun run scripts/bench-replay.ts --agent claude --shape short --mb ${size.shortMb} --runs ${size.runs}`,
  `bun run scripts/bench-memory.ts --line-mb ${size.lineMb}`,
  `bun run scripts/bench-memory.ts --stream-mb ${size.bigStreamMb}`,
  `bun run scripts/bench-run.ts --agent claude --shape heavy --mb ${size.streamMb}   # and --agent pi, --shape short`,
  "bun run scripts/bench-start.ts",
  "bun run scripts/bench-ledger.ts",
  "bun run scripts/bench-overhead.ts",
];
md.push("");
md.push("```sh");
md.push(...commands);
md.push("```");

banner("markdown");
console.log(md.join("\n"));
if (values.out) writeFileSync(values.out, `${md.join("\n")}\n`);
const failed =
  throughput.some((t) => t.failed) ||
  memory.some((m) => m.r.failed) ||
  runs.some((r) => r.failed !== null) ||
  start.some((s) => s.failed) ||
  (ledger !== null && ledger.failures.length > 0) ||
  overhead.some((o) => o.failed);
if (failed) process.exitCode = 1;
