/**
 * bench-overhead.ts — what `agentport run --agent pi` costs on top of the
 * agent: the fake pi (the compiled binary through a symlink named fake-pi)
 * spawned directly, against the same fake pi driven by `agentport run`
 * (declare in the ledger, session file, run folder, own process group,
 * bounded framing, reducer, judge, verdict).
 *
 * Run by hand (not part of the test suite):
 *   bun run scripts/bench-overhead.ts [--runs 15]
 *
 * Two scenarios: `tools` (the built-in: text, three tool calls, ~40 KB of
 * events) and a heavy one (400 read calls with 16 KB results, ~27 MB of
 * events). Direct and driven runs are interleaved; medians in ms. The first
 * driven run of a fresh state folder also probes pi (--version, --help) and
 * caches the answer in the ledger: reported apart, not in the medians.
 */
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { median, requireAgentport, table } from "./bench-replay.ts";

export interface OverheadRow {
  scenario: string;
  streamKiB: number;
  directMs: number;
  drivenMs: number;
  overheadMs: number;
  firstRunMs: number;
  failed: string | null;
}

async function timed(argv: string[], env: Record<string, string>, cwd: string, stdin: string | null): Promise<{ ms: number; code: number; bytes: number; err: string }> {
  const t0 = performance.now();
  const p = Bun.spawn(argv, { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, stdin: stdin === null ? "ignore" : new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).arrayBuffer(), new Response(p.stderr).text(), p.exited]);
  return { ms: performance.now() - t0, code, bytes: out.byteLength, err };
}

export async function benchOverhead(opts: { runs: number }): Promise<OverheadRow[]> {
  const bin = requireAgentport();
  const dir = mkdtempSync(join(tmpdir(), "agentport-overhead-"));
  try {
    const fake = join(dir, "fake-pi");
    symlinkSync(bin, fake);
    const heavy = join(dir, "heavy.json");
    const chunk = "const value = compute(input, options); // a line of source code\n".repeat(256); // 16 KiB
    writeFileSync(
      heavy,
      JSON.stringify({ steps: [...Array.from({ length: 400 }, (_, i) => ({ tool: { name: "read", args: { path: `src/file-${i}.ts` }, result: chunk } })), { text: "Read them all." }] }),
    );
    const rows: OverheadRow[] = [];
    for (const [name, scenario] of [["tools", "tools"], ["heavy (400 × 16 KiB reads)", heavy]] as const) {
      const home = join(dir, `home-${rows.length}`);
      const env = { AGENTPORT_FAKE_SCENARIO: scenario, AGENTPORT_HOME: home, HOME: dir, PI_CODING_AGENT_DIR: join(dir, "pi-agent") };
      const direct = [fake, "--mode", "json", "--session-dir", join(dir, "direct-sessions"), "--model", "standin/standin-model"];
      const driven = [bin, "run", "--agent", "pi", "--pi-bin", fake, "--model", "standin/standin-model", "--direct", "--progress", "off", "--json", "-"];
      const first = await timed(driven, env, dir, "Do it.");
      let failed: string | null = first.code === 0 ? null : `agentport run exit ${first.code}: ${first.err.trim().slice(-200)}`;
      const d: number[] = [];
      const a: number[] = [];
      let bytes = 0;
      for (let i = 0; i < opts.runs && failed === null; i++) {
        const x = await timed(direct, env, dir, "Do it.");
        if (x.code !== 0) failed = `fake pi exit ${x.code}: ${x.err.trim().slice(-200)}`;
        bytes = x.bytes;
        d.push(x.ms);
        const y = await timed(driven, env, dir, "Do it.");
        if (y.code !== 0) failed = `agentport run exit ${y.code}: ${y.err.trim().slice(-200)}`;
        a.push(y.ms);
      }
      const dm = d.length ? median(d) : NaN;
      const am = a.length ? median(a) : NaN;
      rows.push({ scenario: name, streamKiB: bytes / 1024, directMs: dm, drivenMs: am, overheadMs: am - dm, firstRunMs: first.ms, failed });
      process.stderr.write(`  overhead ${name}: direct ${dm.toFixed(1)} ms, driven ${am.toFixed(1)} ms\n`);
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function overheadTable(rows: OverheadRow[]): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");
  return table(
    ["scenario", "pi stream KiB", "fake pi direct ms", "via agentport run ms", "overhead ms", "first run (probe) ms"],
    rows.map((r) => [r.scenario + (r.failed ? ` (FAILED: ${r.failed})` : ""), f(r.streamKiB), f(r.directMs), f(r.drivenMs), f(r.overheadMs), f(r.firstRunMs)]),
  );
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Bun.argv.slice(2), options: { runs: { type: "string", default: "15" }, help: { type: "boolean", short: "h" } } });
  if (values.help) {
    console.log("usage: bun run scripts/bench-overhead.ts [--runs 15]");
    process.exit(0);
  }
  const rows = await benchOverhead({ runs: Number(values.runs) });
  console.log(overheadTable(rows));
  if (rows.some((r) => r.failed)) process.exitCode = 1;
}
