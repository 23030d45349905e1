/**
 * bench-density.ts — how many runs one box supervises at once (issue #30).
 *
 * Run by hand (not part of the test suite), after `bun run scripts/build.ts`:
 *   bun run scripts/bench-density.ts [--n 16,64,128] [--seconds 20] [--agent claude|pi]
 *
 * For each N: N `agentport run` processes started at once on ONE home (one
 * SQLite ledger), each driving the fake agent (the compiled binary through a
 * symlink) through a scenario that streams text and tool calls for ~S seconds
 * and then answers; and the same N fakes run bare (the argv, stdin and
 * scenario agentport gives them, stdout to /dev/null) on the same cores.
 *   right      runs whose verdict is completed, ok, with the scenario's answer
 *   ledger err stderr lines (not progress records) naming a locked/busy ledger
 *   whole      run folders whose verdict.json is there and parses
 *   priv       agentport's peak private memory (smaps_rollup Anonymous, sampled
 *              every 100 ms), median / max; keeper: the keeper's, median
 *   cpu        agentport's CPU per run beside the fake's: wait4 rusage of the
 *              agentport process (it reaps the fake, so the fake is in it)
 *              minus the bare fake's median; keeper: its sampled CPU, median
 *   ready      the moment the bench spawned that agentport to the moment it
 *              begins its declare (sessions.declared_at, stamped before the
 *              write): process start, arguments, ledger open; p50 / p99
 *   declare    the declare write itself: phases.started_at (stamped as the
 *              declare's transaction returned) minus declared_at; p50 / p99
 *   finish     the finish write, bounded above: the process's exit seen here
 *              minus phases.ended_at (stamped before the write; the verdict's
 *              print and the process exit are in it too); p50 / p99
 *   wall       all N supervised runs vs all N bare fakes, and their ratio
 */
import { Database } from "bun:sqlite";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { requireAgentport } from "./bench-replay.ts";
import { fakeRunEnv, median } from "./bench-measure.ts";
import { launchAll, quantile, type Launched } from "./bench-density-procs.ts";
import { ANSWER, PROMPT, runFlags, scenario, type Agent } from "./bench-density-scenario.ts";

const runArgv = (bin: string, agent: Agent, fake: string): string[] => [bin, "run", ...runFlags(agent, fake)];

const envFor = fakeRunEnv;

/** The argv agentport gives the fake, from one quick calibration run's argv.json. */
async function fakeArgv(bin: string, agent: Agent, fake: string, dir: string): Promise<string[]> {
  const file = join(dir, "quick.json");
  writeFileSync(file, JSON.stringify(scenario(agent, 0)));
  const home = join(dir, "home-calibrate");
  const { runs } = await launchAll([runArgv(bin, agent, fake)], {
    env: envFor(dir, home, file),
    cwd: dir,
    stdin: PROMPT,
    capture: true,
    keeper: false,
  });
  if (runs[0]?.code !== 0) throw new Error(`calibration run failed (exit ${runs[0]?.code}): ${runs[0]?.stderr.slice(-400)}`);
  const folder = readdirSync(join(home, "runs"))[0]!;
  return (JSON.parse(readFileSync(join(home, "runs", folder, "argv.json"), "utf8")) as { argv: string[] }).argv;
}

interface Verdict {
  session_id?: string;
  status?: string;
  ok?: boolean;
  text?: string | null;
}

function verdictOf(run: Launched): Verdict | null {
  try {
    return JSON.parse(run.stdout) as Verdict;
  } catch {
    return null;
  }
}

const LEDGER_ERROR = /database is locked|SQLITE_BUSY|ledger/i;

function ledgerErrors(runs: Launched[]): number {
  return runs.reduce((n, r) => n + r.stderr.split("\n").filter((l) => !l.startsWith("{") && LEDGER_ERROR.test(l)).length, 0);
}

function wholeFolders(home: string): { folders: number; whole: number } {
  const root = join(home, "runs");
  const names = existsSync(root) ? readdirSync(root) : [];
  let whole = 0;
  for (const name of names) {
    try {
      JSON.parse(readFileSync(join(root, name, "verdict.json"), "utf8"));
      whole++;
    } catch {
      // missing or torn
    }
  }
  return { folders: names.length, whole };
}

/** Per run, in ms: spawn → declare begins, the declare write, and the finish write (with the exit after it). */
function ledgerTimes(home: string, runs: Launched[]): { ready: number[]; declare: number[]; finish: number[] } {
  const db = new Database(join(home, "ledger.sqlite"), { readonly: true });
  const out = { ready: [] as number[], declare: [] as number[], finish: [] as number[] };
  try {
    const q = db.query<{ declared_at: string; started_at: string; ended_at: string | null }, [string]>(
      "SELECT s.declared_at, p.started_at, p.ended_at FROM sessions s JOIN phases p ON p.session_id = s.id WHERE s.id = ? AND p.seq = 1",
    );
    for (const r of runs) {
      const id = verdictOf(r)?.session_id;
      const row = id ? q.get(id) : null;
      if (!row) continue;
      const declared = Date.parse(row.declared_at);
      out.ready.push(declared - r.spawnEpochMs);
      out.declare.push(Date.parse(row.started_at) - declared);
      if (row.ended_at) out.finish.push(r.exitEpochMs - Date.parse(row.ended_at));
    }
    return out;
  } finally {
    db.close();
  }
}

const mib = (kb: number | null) => (kb === null ? "-" : (kb / 1024).toFixed(1));
const ms = (x: number | null) => (x === null ? "-" : x.toFixed(0));
const nums = (xs: (number | null)[]) => xs.filter((x): x is number => x !== null);

async function densityRow(bin: string, agent: Agent, n: number, seconds: number, dir: string, bare: string[]): Promise<string[]> {
  const file = join(dir, `scenario-${agent}.json`);
  writeFileSync(file, JSON.stringify(scenario(agent, seconds)));
  const home = join(dir, `home-${n}`);
  const env = envFor(dir, home, file);
  // pi appends to its session file: a fresh one for each bare fake.
  const bareArgvs = Array.from({ length: n }, (_, i) =>
    bare.map((w, k) => (bare[k - 1] === "--session" ? join(dir, `bare-${n}-${i}.jsonl`) : w)),
  );
  const b = await launchAll(bareArgvs, { env, cwd: dir, stdin: PROMPT, capture: false, keeper: false });
  const bareFailed = b.runs.filter((r) => r.code !== 0).length;
  const s = await launchAll(
    Array.from({ length: n }, () => runArgv(bin, agent, join(dir, `fake-${agent}`))),
    { env, cwd: dir, stdin: PROMPT, capture: true, keeper: true },
  );
  const right = s.runs.filter((r) => {
    const v = verdictOf(r);
    return r.code === 0 && v?.status === "completed" && v.ok === true && v.text?.trim() === ANSWER;
  }).length;
  const wrong = s.runs.find((r) => r.code !== 0);
  if (wrong)
    console.error(
      `N=${n}: a run exited ${wrong.code}: ${wrong.stderr
        .split("\n")
        .filter((l) => !l.startsWith("{"))
        .join(" ")
        .slice(-300)}`,
    );
  if (bareFailed) console.error(`N=${n}: ${bareFailed} bare fakes failed`);
  const { folders, whole } = wholeFolders(home);
  const priv = nums(s.runs.map((r) => r.peakAnonKB));
  const bareCpu = median(nums(b.runs.map((r) => r.cpuMs)));
  const overhead = nums(s.runs.map((r) => r.cpuMs)).map((c) => c - bareCpu);
  const t = ledgerTimes(home, s.runs);
  const p = (xs: number[]) => `${ms(quantile(xs, 0.5))} / ${ms(quantile(xs, 0.99))}`;
  return [
    String(n),
    `${right}/${n}`,
    String(ledgerErrors(s.runs)),
    `${whole}/${folders}`,
    `${mib(median(priv))} / ${mib(Math.max(...priv))}`,
    mib(median(nums(s.runs.map((r) => r.keeperPeakAnonKB)))),
    mib(median(nums(b.runs.map((r) => r.peakAnonKB)))),
    `${ms(median(overhead))} / ${ms(bareCpu)}`,
    ms(median(nums(s.runs.map((r) => r.keeperCpuMs)))),
    p(t.ready),
    p(t.declare),
    p(t.finish),
    `${s.wallS.toFixed(1)} / ${b.wallS.toFixed(1)}`,
    (s.wallS / b.wallS).toFixed(2),
  ];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      n: { type: "string", default: "16,64,128" },
      seconds: { type: "string", default: "20" },
      agent: { type: "string", default: "claude" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log("usage: bun run scripts/bench-density.ts [--n 16,64,128] [--seconds 20] [--agent claude|pi]");
    return;
  }
  const ns = values.n.split(",").map(Number);
  const seconds = Number(values.seconds);
  const agent = values.agent as Agent;
  if (agent !== "claude" && agent !== "pi") throw new Error(`--agent must be claude or pi, not "${values.agent}"`);
  if (!ns.every((n) => Number.isInteger(n) && n > 0) || !(seconds >= 0))
    throw new Error("--n takes positive integers (16,64), --seconds a number ≥ 0");
  const bin = requireAgentport();
  const dir = mkdtempSync(join(tmpdir(), "agentport-density-"));
  try {
    symlinkSync(bin, join(dir, `fake-${agent}`));
    const bare = await fakeArgv(bin, agent, join(dir, `fake-${agent}`), dir);
    const rows: string[][] = [];
    for (const n of ns) {
      const t = Date.now();
      const load = loadavg()[0]!.toFixed(1);
      rows.push([...(await densityRow(bin, agent, n, seconds, dir, bare)), load]);
      console.error(
        `N=${n} measured in ${((Date.now() - t) / 1000).toFixed(0)} s; load ${loadavg()
          .map((x) => x.toFixed(2))
          .join(" ")}`,
      );
    }
    console.log(
      `agent ${agent}, ~${seconds} s per run, ${cpus().length} cores, load ${loadavg()
        .map((x) => x.toFixed(2))
        .join(" ")}\n`,
    );
    const head = [
      "N",
      "right",
      "ledger err",
      "whole",
      "priv MiB med/max",
      "keeper MiB",
      "fake MiB",
      "cpu ms agentport/fake",
      "keeper cpu ms",
      "ready ms p50/p99",
      "declare ms p50/p99",
      "finish ms p50/p99",
      "wall s sup/bare",
      "ratio",
      "load",
    ];
    const line = (r: string[]) => `| ${r.join(" | ")} |`;
    console.log([line(head), line(head.map(() => "---")), ...rows.map(line)].join("\n"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
