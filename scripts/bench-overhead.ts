/**
 * bench-overhead.ts — what `agentport run` costs on top of the agent: the
 * fake claude and the fake pi (the compiled binary through symlinks named
 * fake-claude and fake-pi) spawned directly with the very argv, stdin and
 * environment agentport gives them, against the same fake driven by
 * `agentport run` (declare in the ledger, run folder, keeper, own process
 * group, bounded framing, reducer, judge, verdict, finish).
 *
 * Run by hand (not part of the test suite):
 *   bun run scripts/bench-overhead.ts [--runs 30] [--agents claude,pi] [--scenarios tools,heavy]
 *
 * Scenarios: `tools` (the built-in: text and tool calls, a few KB of events)
 * and `heavy` (400 read calls with 16 KB results, ~7–27 MB of events).
 * Direct and driven runs are interleaved round by round; wall ms as median
 * and p90, the overhead as the median and p90 of the per-round differences,
 * and CPU ms (user + system of the process and the children it waited for).
 * The first driven run of a fresh state folder (the ledger is created, pi is
 * probed) is reported apart, not in the figures. With $AGENTPORT_BEFORE_BIN,
 * that binary is driven too, in the same rounds (its own state folder).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { beforeBin, requireAgentport } from "./bench-replay.ts";
import { fakeRunEnv, median, table } from "./bench-measure.ts";

type Agent = "claude" | "pi";

export interface OverheadRow {
  agent: Agent;
  /** Measured with $AGENTPORT_BEFORE_BIN, in the same rounds. */
  before: boolean;
  scenario: string;
  streamKiB: number;
  rounds: number;
  directMs: number;
  directP90Ms: number;
  drivenMs: number;
  drivenP90Ms: number;
  /** Median and p90 of driven − direct, round by round. */
  overheadMs: number;
  overheadP90Ms: number;
  directCpuMs: number;
  drivenCpuMs: number;
  firstRunMs: number;
  failed: string | null;
}

interface Timed {
  ms: number;
  cpuMs: number;
  code: number;
  bytes: number;
  err: string;
}

async function timed(argv: string[], env: Record<string, string>, cwd: string, stdin: string): Promise<Timed> {
  const t0 = performance.now();
  const p = Bun.spawn(argv, { cwd, env, stdin: new TextEncoder().encode(stdin), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(p.stdout).arrayBuffer(), new Response(p.stderr).text(), p.exited]);
  const ms = performance.now() - t0;
  const usage = p.resourceUsage();
  const cpuMs = usage === undefined ? NaN : Number(usage.cpuTime.user + usage.cpuTime.system) / 1000;
  return { ms, cpuMs, code, bytes: out.byteLength, err };
}

export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** The argv agentport gave the agent in its last run, from that run folder's argv.json. */
function lastArgv(home: string): string[] {
  const runs = join(home, "runs");
  const last = readdirSync(runs).sort().at(-1)!;
  return (JSON.parse(readFileSync(join(runs, last, "argv.json"), "utf8")) as { argv: string[] }).argv;
}

export async function benchOverhead(opts: { runs: number; agents?: Agent[]; scenarios?: string[] }): Promise<OverheadRow[]> {
  const bin = requireAgentport();
  const dir = mkdtempSync(join(tmpdir(), "agentport-overhead-"));
  try {
    const heavy = join(dir, "heavy.json");
    const chunk = "const value = compute(input, options); // a line of source code\n".repeat(256); // 16 KiB
    const readStep = (i: number, agent: Agent) => ({
      tool:
        agent === "pi"
          ? { name: "read", args: { path: `src/file-${i}.ts` }, result: chunk }
          : { name: "Read", input: { file_path: `src/file-${i}.ts` }, result: chunk },
    });
    const scenarios: Record<string, (agent: Agent) => string> = {
      tools: () => "tools",
      heavy: (agent) => {
        const file = `${heavy}.${agent}`;
        const steps: unknown[] = Array.from({ length: 400 }, (_, i) => readStep(i, agent));
        steps.push({ text: "Read them all." });
        if (agent === "claude") steps.push({ result: { text: "Read them all." } });
        writeFileSync(file, JSON.stringify({ steps }));
        return file;
      },
    };
    const agents = opts.agents ?? ["claude", "pi"];
    const names = opts.scenarios ?? Object.keys(scenarios);
    const rows: OverheadRow[] = [];
    for (const name of names) {
      const before = beforeBin();
      const drivers =
        before === null
          ? [{ bin, before: false }]
          : [
              { bin, before: false },
              { bin: before, before: true },
            ];
      const cases = agents
        .flatMap((agent) => drivers.map((driver) => ({ agent, driver })))
        .map(({ agent, driver }) => {
          const fake = join(dir, `fake-${agent}`);
          try {
            symlinkSync(bin, fake);
          } catch {
            // made for an earlier scenario
          }
          const home = join(dir, `home-${name}-${agent}${driver.before ? "-before" : ""}`);
          const env = fakeRunEnv(dir, home, scenarios[name]!(agent));
          const driven =
            agent === "pi"
              ? [
                  driver.bin,
                  "run",
                  "--agent",
                  "pi",
                  "--pi-bin",
                  fake,
                  "--model",
                  "standin/standin-model",
                  "--direct",
                  "--progress",
                  "off",
                  "--json",
                  "-",
                ]
              : [driver.bin, "run", "--agent", "claude", "--claude-bin", fake, "--progress", "off", "--json", "-"];
          return {
            agent,
            before: driver.before,
            env,
            home,
            driven,
            direct: [] as string[],
            d: [] as Timed[],
            a: [] as Timed[],
            first: null as Timed | null,
            failed: null as string | null,
          };
        });
      for (const c of cases) {
        c.first = await timed(c.driven, c.env, dir, "Do it.");
        if (c.first.code !== 0) c.failed = `agentport run exit ${c.first.code}: ${c.first.err.trim().slice(-200)}`;
        else c.direct = lastArgv(c.home);
      }
      for (let i = 0; i < opts.runs; i++) {
        for (const c of cases) {
          if (c.failed !== null) continue;
          // pi appends to its session file: a fresh one each direct round.
          const direct = c.direct.map((word, k) =>
            c.direct[k - 1] === "--session" ? join(dir, `direct-${c.agent}-${name}-${i}.jsonl`) : word,
          );
          const x = await timed(direct, c.env, dir, "Do it.");
          if (x.code !== 0) c.failed = `fake ${c.agent} exit ${x.code}: ${x.err.trim().slice(-200)}`;
          const y = await timed(c.driven, c.env, dir, "Do it.");
          if (y.code !== 0) c.failed = `agentport run exit ${y.code}: ${y.err.trim().slice(-200)}`;
          c.d.push(x);
          c.a.push(y);
        }
      }
      for (const c of cases) {
        const ms = (xs: Timed[]) => xs.map((x) => x.ms);
        const diffs = c.a.map((y, k) => y.ms - c.d[k]!.ms);
        const row: OverheadRow = {
          agent: c.agent,
          before: c.before,
          scenario: name,
          streamKiB: (c.d.at(-1)?.bytes ?? NaN) / 1024,
          rounds: c.a.length,
          directMs: median(ms(c.d)),
          directP90Ms: percentile(ms(c.d), 90),
          drivenMs: median(ms(c.a)),
          drivenP90Ms: percentile(ms(c.a), 90),
          overheadMs: median(diffs),
          overheadP90Ms: percentile(diffs, 90),
          directCpuMs: median(c.d.map((x) => x.cpuMs)),
          drivenCpuMs: median(c.a.map((x) => x.cpuMs)),
          firstRunMs: c.first?.ms ?? NaN,
          failed: c.failed,
        };
        rows.push(row);
        process.stderr.write(
          `  overhead ${c.before ? "before: " : ""}${c.agent} ${name}: direct ${row.directMs.toFixed(1)} ms, driven ${row.drivenMs.toFixed(1)} ms, +${row.overheadMs.toFixed(1)} ms (p90 +${row.overheadP90Ms.toFixed(1)})\n`,
        );
      }
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function overheadTable(rows: OverheadRow[]): string {
  const f = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "n/a");
  return table(
    [
      "agent, scenario",
      "stream KiB",
      "rounds",
      "direct ms (p90)",
      "agentport run ms (p90)",
      "overhead ms (p90)",
      "CPU ms direct / run",
      "first run ms",
    ],
    rows.map((r) => [
      `${r.before ? "before: " : ""}${r.agent} ${r.scenario}${r.failed ? ` (FAILED: ${r.failed})` : ""}`,
      f(r.streamKiB),
      String(r.rounds),
      `${f(r.directMs)} (${f(r.directP90Ms)})`,
      `${f(r.drivenMs)} (${f(r.drivenP90Ms)})`,
      `${f(r.overheadMs)} (${f(r.overheadP90Ms)})`,
      `${f(r.directCpuMs)} / ${f(r.drivenCpuMs)}`,
      f(r.firstRunMs),
    ]),
  );
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      runs: { type: "string", default: "30" },
      agents: { type: "string", default: "claude,pi" },
      scenarios: { type: "string", default: "tools,heavy" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log("usage: bun run scripts/bench-overhead.ts [--runs 30] [--agents claude,pi] [--scenarios tools,heavy]");
    process.exit(0);
  }
  const rows = await benchOverhead({
    runs: Number(values.runs),
    agents: values.agents.split(",") as Agent[],
    scenarios: values.scenarios.split(","),
  });
  console.log(overheadTable(rows));
  if (rows.some((r) => r.failed)) process.exitCode = 1;
}
