/**
 * bench-start.ts — start-up cost of the compiled binary: wall time of
 * `agentport --version` and of `agentport selftest` (the whole offline
 * self-test: fake agents, kills, timeouts).
 *
 * Run by hand (not part of the test suite):
 *   bun run scripts/bench-start.ts [--runs 30] [--selftest-runs 5]
 *
 * With hyperfine on PATH (apt-get install hyperfine) it does the timing
 * (`-N`: no shell, warm-up runs first); else a loop of Bun.spawn here.
 * Reports the median and min/max in milliseconds. The binary is
 * $AGENTPORT_BIN, else <repo>/dist/agentport.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { requireAgentport } from "./bench-replay.ts";
import { median, table } from "./bench-measure.ts";

export interface Timing {
  name: string;
  medianMs: number;
  minMs: number;
  maxMs: number;
  runs: number;
  tool: "hyperfine" | "loop";
  failed: string | null;
}

/** Time `argv` `runs` times (after `warmup` untimed runs). */
export async function timeCommand(
  name: string,
  argv: string[],
  runs: number,
  warmup: number,
  env: Record<string, string> = {},
): Promise<Timing> {
  const hyperfine = Bun.which("hyperfine");
  const fullEnv = { ...process.env, NO_COLOR: "1", ...env };
  if (hyperfine) {
    const dir = mkdtempSync(join(tmpdir(), "agentport-hf-"));
    const out = join(dir, "hf.json");
    const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
    const proc = Bun.spawnSync(
      [
        hyperfine,
        "-N",
        "--style",
        "none",
        "--warmup",
        String(warmup),
        "--runs",
        String(runs),
        "--export-json",
        out,
        argv.map(quote).join(" "),
      ],
      {
        env: fullEnv,
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    try {
      if (proc.exitCode !== 0 || !existsSync(out))
        return { name, medianMs: NaN, minMs: NaN, maxMs: NaN, runs, tool: "hyperfine", failed: proc.stderr.toString().trim().slice(-300) };
      const r = (JSON.parse(readFileSync(out, "utf8")) as { results: { median: number; min: number; max: number }[] }).results[0]!;
      return { name, medianMs: r.median * 1000, minMs: r.min * 1000, maxMs: r.max * 1000, runs, tool: "hyperfine", failed: null };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const times: number[] = [];
  for (let i = 0; i < warmup + runs; i++) {
    const t0 = performance.now();
    const p = Bun.spawnSync(argv, { env: fullEnv, stdout: "ignore", stderr: "ignore" });
    const ms = performance.now() - t0;
    if (p.exitCode !== 0) return { name, medianMs: NaN, minMs: NaN, maxMs: NaN, runs, tool: "loop", failed: `exit ${p.exitCode}` };
    if (i >= warmup) times.push(ms);
  }
  return { name, medianMs: median(times), minMs: Math.min(...times), maxMs: Math.max(...times), runs, tool: "loop", failed: null };
}

export async function benchStart(opts: { runs: number; selftestRuns: number }): Promise<Timing[]> {
  const bin = requireAgentport();
  const home = mkdtempSync(join(tmpdir(), "agentport-start-"));
  try {
    return [
      await timeCommand("agentport --version", [bin, "--version"], opts.runs, 3),
      await timeCommand("agentport selftest", [bin, "selftest"], opts.selftestRuns, 1, { AGENTPORT_HOME: home }),
    ];
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export function timingTable(rows: Timing[]): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");
  return table(
    ["command", "median ms", "min ms", "max ms", "runs", "timed by"],
    rows.map((r) => [r.name + (r.failed ? ` (FAILED: ${r.failed})` : ""), f(r.medianMs), f(r.minMs), f(r.maxMs), String(r.runs), r.tool]),
  );
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      runs: { type: "string", default: "30" },
      "selftest-runs": { type: "string", default: "5" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log("usage: bun run scripts/bench-start.ts [--runs 30] [--selftest-runs 5]");
    process.exit(0);
  }
  const rows = await benchStart({ runs: Number(values.runs), selftestRuns: Number(values["selftest-runs"]) });
  console.log(timingTable(rows));
  if (rows.some((r) => r.failed)) process.exitCode = 1;
}
