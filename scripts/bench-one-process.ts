/**
 * bench-one-process.ts — one agentport per run against one process for many
 * runs (issue #30), at N runs of the fake agent, interleaved round by round.
 *
 * Run by hand (not part of the test suite), after `bun run scripts/build.ts`:
 *   bun run scripts/bench-one-process.ts [--n 64] [--seconds 10] [--agent claude|pi] [--rounds 1]
 *
 *   per-run   N `agentport run` processes at once on one home (the worker's
 *             shape until this measure: one `agentport run` per attempt)
 *   one       ONE process (this script in --phases mode, under bun from the
 *             sources) that parses the same `run` arguments once per run and
 *             runs all N phases at once through the run path (runSetup: the
 *             ledger declare, run folder, keeper, agent, judge, finish)
 * The fake's own CPU: 3 bare runs of it (the argv agentport gave it). Both on fresh homes, the same fake and scenario as bench-density.ts. For
 * each: right verdicts, wall s, CPU ms per run beyond the fake's (rusage of
 * agentport and the fakes it reaped, minus N × the bare fake's median, plus
 * the keepers' sampled CPU), private MiB per run (the sum of every agentport's
 * and keeper's peak smaps Anonymous, over N).
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { fakeRunEnv, median, table } from "./bench-measure.ts";
import { launchAll, type Launched } from "./bench-density-procs.ts";
import { requireAgentport } from "./bench-replay.ts";
import { ANSWER, PROMPT, runFlags, scenario, type Agent } from "./bench-density-scenario.ts";

/** --phases mode: N runs of the `run` path in this one process; one JSON line of verdict counts on stdout. */
async function phases(n: number, flags: string[]): Promise<void> {
  const { parseArgs: cittyArgs } = await import("citty");
  const { runCommand, runSetup, agentBin } = await import("../src/cli/commands/run.ts");
  const { agentSetup, projectConfig, openLedger, setupLedger, folder } = await import("../src/cli/agent-options.ts");
  const { commandLine } = await import("../src/cli/flags.ts");
  const { progressView } = await import("../src/cli/progress-view.ts");
  const cwd = folder(undefined);
  const setupOf = async () => {
    const args = cittyArgs(flags, runCommand.args as never) as Record<string, unknown> & { _?: unknown };
    const line = commandLine(args, flags);
    return agentSetup({ flags: line.flags, passThrough: line.passThrough }, cwd, {
      useDefault: true,
      config: await projectConfig(args as never, cwd),
    });
  };
  const first = await setupOf();
  await using ledger = await openLedger(setupLedger(first));
  const outcomes = await Promise.all(
    Array.from({ length: n }, async () => {
      const setup = await setupOf();
      const view = progressView("json", setup.agent, setup.model);
      const out = await runSetup(ledger, setup, { bin: agentBin(setup), prompt: PROMPT, progress: view.sink });
      view.close();
      return out;
    }),
  );
  const right = outcomes.filter((o) => o.verdict.status === "completed" && o.verdict.ok && o.verdict.text?.trim() === ANSWER).length;
  console.log(JSON.stringify({ right }));
}

const sum = (xs: (number | null)[]) => xs.reduce<number>((a, x) => a + (x ?? 0), 0);

function shapeRow(name: string, n: number, wallS: number, runs: Launched[], right: number, bareCpu: number): string[] {
  const cpu = (sum(runs.map((r) => r.cpuMs)) - n * bareCpu + sum(runs.map((r) => r.keeperCpuMs))) / n;
  const priv = (sum(runs.map((r) => r.peakAnonKB)) + sum(runs.map((r) => r.keeperPeakAnonKB))) / 1024 / n;
  return [name, `${right}/${n}`, wallS.toFixed(1), cpu.toFixed(0), priv.toFixed(1), loadavg()[0]!.toFixed(1)];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      n: { type: "string", default: "64" },
      seconds: { type: "string", default: "10" },
      agent: { type: "string", default: "claude" },
      rounds: { type: "string", default: "1" },
      phases: { type: "string" },
      flags: { type: "string" },
    },
  });
  if (values.phases) return phases(Number(values.phases), JSON.parse(values.flags!) as string[]);
  const n = Number(values.n);
  const agent = values.agent as Agent;
  const bin = requireAgentport();
  const dir = mkdtempSync(join(tmpdir(), "agentport-oneproc-"));
  try {
    const fake = join(dir, `fake-${agent}`);
    symlinkSync(bin, fake);
    const file = join(dir, "scenario.json");
    writeFileSync(file, JSON.stringify(scenario(agent, Number(values.seconds))));
    const rows: string[][] = [];
    for (let round = 0; round < Number(values.rounds); round++) {
      // The bare fake's CPU, once per round: a single run of it alone.
      const bare = await launchAll([[bin, "run", ...runFlags(agent, fake)]], {
        env: fakeRunEnv(dir, join(dir, `calibrate-${round}`), file),
        cwd: dir,
        stdin: PROMPT,
        capture: true,
        keeper: false,
      });
      const argv = bare.runs[0]!.code === 0 ? null : bare.runs[0]!.stderr.slice(-300);
      if (argv) throw new Error(`calibration failed: ${argv}`);
      const fakeCpu = await bareFakeCpu(dir, round, file);
      const per = await launchAll(
        Array.from({ length: n }, () => [bin, "run", ...runFlags(agent, fake)]),
        { env: fakeRunEnv(dir, join(dir, `per-${round}`), file), cwd: dir, stdin: PROMPT, capture: true, keeper: true },
      );
      const perRight = per.runs.filter((r) => {
        try {
          const v = JSON.parse(r.stdout) as { ok?: boolean; text?: string };
          return r.code === 0 && v.ok === true && v.text?.trim() === ANSWER;
        } catch {
          return false;
        }
      }).length;
      rows.push(shapeRow(`per-run (${round + 1})`, n, per.wallS, per.runs, perRight, fakeCpu));
      const one = await launchAll(
        [[process.execPath, import.meta.path, "--phases", String(n), "--flags", JSON.stringify(runFlags(agent, fake))]],
        { env: fakeRunEnv(dir, join(dir, `one-${round}`), file), cwd: dir, stdin: PROMPT, capture: true, keeper: true },
      );
      const oneRight = (() => {
        try {
          return (JSON.parse(one.runs[0]!.stdout) as { right: number }).right;
        } catch {
          console.error(
            one.runs[0]!.stderr.split("\n")
              .filter((l) => !l.startsWith("{"))
              .join("\n")
              .slice(-600),
          );
          return 0;
        }
      })();
      rows.push(shapeRow(`one process (${round + 1})`, n, one.wallS, one.runs, oneRight, fakeCpu));
    }
    console.log(`agent ${agent}, N=${n}, ~${values.seconds} s per run`);
    console.log(table(["shape", "right", "wall s", "cpu ms/run beyond the fake", "priv MiB/run", "load"], rows));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The fake's own CPU for one run, from argv.json of a run: spawned bare, median of 3. */
async function bareFakeCpu(dir: string, round: number, file: string): Promise<number> {
  const home = join(dir, `calibrate-${round}`);
  const folder = readdirSync(join(home, "runs"))[0]!;
  const argv = (JSON.parse(readFileSync(join(home, "runs", folder, "argv.json"), "utf8")) as { argv: string[] }).argv;
  const b = await launchAll(
    [0, 1, 2].map((i) => argv.map((w, k) => (argv[k - 1] === "--session" ? join(dir, `bare-${round}-${i}.jsonl`) : w))),
    { env: fakeRunEnv(dir, home, file), cwd: dir, stdin: PROMPT, capture: false, keeper: false },
  );
  const cpus = b.runs.flatMap((r) => (r.cpuMs === null ? [] : [r.cpuMs]));
  return median(cpus) ?? 0;
}

await main();
