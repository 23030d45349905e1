/**
 * bench-run.ts — peak memory of `agentport run` driving a fake agent that
 * emits a generated stream: the same corpora as the replay benchmarks, but
 * through a pipe, the spawn driver, the supervisor (loop digests on) and the
 * ledger.
 *
 * Run by hand (not part of the test suite):
 *   bun run scripts/bench-run.ts [--agent claude|pi] [--mb 200] [--shape heavy|short] [--seed 1]
 *
 * The fake agent is a shell script (written to the bench folder) that answers
 * the version and help probes and otherwise `cat`s the stream, so the agent
 * itself costs nothing. Each run is measured under `/usr/bin/time -f %M`; the
 * verdict must count every line of the stream (summary.records).
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { MIB, SHAPES, type Shape } from "./gen-claude-stream.ts";
import { BENCH_DIR, beforeBin, ensureStream, requireAgentport } from "./bench-replay.ts";
import { runMeasured, table, tail } from "./bench-measure.ts";

/** The model the generated pi stream reports, so the judge accepts the run. */
const PI_MODEL = "openrouter/anthropic/claude-sonnet-4.5";

const EMITTER = `#!/bin/sh
# A fake agent: answers the probes, then emits $EMIT_FILE on stdout.
for a in "$@"; do case "$a" in --version|-v) echo "0.73.1"; exit 0;; --help) echo "usage: pi"; exit 0;; esac; done
cat > /dev/null &
exec cat "$EMIT_FILE"
`;

export interface RunMemoryRow {
  label: string;
  mib: number;
  wallS: number;
  rssMiB: number | null;
  /** Peak private memory (Measured.privateKB), MiB. */
  privateMiB: number | null;
  records: number | null;
  lines: number;
  failed: string | null;
}

/** `agentport run --agent <agent>` on one stream; `mode` as ensureStream takes it. */
export async function benchRunMemory(opts: {
  agent: "claude" | "pi";
  mode: "stream" | "pi" | "bigline";
  size: number;
  shape?: Shape;
  seed: number;
  label: string;
  bin?: string;
}): Promise<RunMemoryRow> {
  const bin = opts.bin ?? requireAgentport();
  const file = await ensureStream(opts.mode, opts.size, opts.seed, opts.shape ?? "short");
  const dir = mkdtempSync(join(tmpdir(), "agentport-bench-run-"));
  try {
    const fake = join(dir, "fake-agent");
    writeFileSync(fake, EMITTER);
    chmodSync(fake, 0o755);
    const argv =
      opts.agent === "pi"
        ? [bin, "run", "--agent", "pi", "--pi-bin", fake, "--model", PI_MODEL, "--direct", "--progress", "off", "--json", "Do it."]
        : [bin, "run", "--agent", "claude", "--claude-bin", fake, "--progress", "off", "--json", "Do it."];
    const env = {
      EMIT_FILE: file.path,
      AGENTPORT_HOME: join(dir, "home"),
      HOME: dir,
      PI_CODING_AGENT_DIR: join(dir, "pi-agent"),
      NO_COLOR: "1",
    };
    const m = await runMeasured(["env", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv], { timeoutS: 600 });
    let records: number | null = null;
    let failed: string | null = null;
    try {
      const v = JSON.parse(m.stdout) as { summary?: { records?: number; oversize_records?: number } };
      records = (v.summary?.records ?? 0) + (v.summary?.oversize_records ?? 0);
      if (records !== file.lines) failed = `the verdict counts ${records} records, the stream has ${file.lines} lines`;
    } catch {
      failed = `stdout is not a verdict: ${tail(m.stdout, 200)} ${tail(m.stderr, 200)}`;
    }
    if (m.timedOut) failed = "timed out";
    return {
      label: opts.label,
      mib: file.bytes / MIB,
      wallS: m.wallS,
      rssMiB: m.rssKB === null ? null : m.rssKB / 1024,
      privateMiB: m.privateKB === null ? null : m.privateKB / 1024,
      records,
      lines: file.lines,
      failed,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function runMemoryTable(rows: RunMemoryRow[]): string {
  const f = (x: number | null, d = 1) => (x === null || !Number.isFinite(x) ? "n/a" : x.toFixed(d));
  return table(
    ["agentport run on", "MiB", "wall s", "peak RSS MiB", "private MiB", "records"],
    rows.map((r) => [
      r.label + (r.failed ? ` (FAILED: ${r.failed})` : ""),
      f(r.mib, 0),
      f(r.wallS, 2),
      f(r.rssMiB),
      f(r.privateMiB),
      `${r.records ?? "n/a"}/${r.lines}`,
    ]),
  );
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      agent: { type: "string", default: "claude" },
      mb: { type: "string", default: "200" },
      shape: { type: "string", default: "heavy" },
      seed: { type: "string", default: "1" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log("usage: bun run scripts/bench-run.ts [--agent claude|pi] [--mb 200] [--shape heavy|short] [--seed 1]");
    process.exit(0);
  }
  const agent: "claude" | "pi" = values.agent === "pi" ? "pi" : "claude";
  const shape = values.shape as Shape;
  if (!SHAPES.includes(shape) || !(Number(values.mb) > 0)) throw new Error("bad --shape/--mb");
  const spec = {
    agent,
    mode: agent === "pi" ? ("pi" as const) : ("stream" as const),
    size: Number(values.mb),
    shape,
    seed: Number(values.seed),
    label: `${agent} ${shape} ${values.mb} MiB`,
  };
  const rows = [await benchRunMemory(spec)];
  const before = beforeBin();
  if (before !== null) rows.push(await benchRunMemory({ ...spec, bin: before, label: `before: ${spec.label}` }));
  console.log(`streams in ${BENCH_DIR}`);
  console.log(runMemoryTable(rows));
  if (rows.some((r) => r.failed)) process.exitCode = 1;
}
