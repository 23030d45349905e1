/**
 * bench-density-procs.ts — the process side of bench-density.ts: N processes
 * started at once, each one's peak private memory (smaps_rollup `Anonymous`)
 * and its keeper's, sampled every 100 ms; CPU from each child's rusage.
 */
import { readFileSync } from "node:fs";

export interface Launched {
  pid: number;
  spawnEpochMs: number;
  exitEpochMs: number;
  code: number | null;
  stdout: string;
  stderr: string;
  /** user + system ms from wait4's rusage: the process and every child it reaped. */
  cpuMs: number | null;
  peakAnonKB: number | null;
  keeperPeakAnonKB: number | null;
  /** The keeper's user + system ms at its last sample (it may live ~100 ms longer). */
  keeperCpuMs: number | null;
}

const TICKS = 100; // USER_HZ on Linux

function anonKB(pid: number): number | null {
  try {
    const kb = Number(/^Anonymous:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1]);
    return Number.isFinite(kb) ? kb : null;
  } catch {
    return null; // gone
  }
}

function cpuTicksMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
  } catch {
    return null;
  }
}

/** The child of pid whose argv says `__keeper`, if it has one yet. */
function keeperOf(pid: number): number | null {
  try {
    for (const c of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean)) {
      if (readFileSync(`/proc/${c}/cmdline`, "utf8").includes("__keeper")) return Number(c);
    }
  } catch {
    // gone
  }
  return null;
}

/**
 * Start every argv at once (stdin: the prompt), wait for all, and measure each.
 * `capture` false sends stdout and stderr to /dev/null (the bare fakes).
 */
export async function launchAll(
  argvs: string[][],
  opts: { env: Record<string, string>; cwd: string; stdin: string; capture: boolean; keeper: boolean },
): Promise<{ wallS: number; runs: Launched[] }> {
  const t0 = performance.now();
  const live = argvs.map((argv) => {
    const spawnEpochMs = Date.now();
    const proc = Bun.spawn(argv, {
      cwd: opts.cwd,
      env: opts.env,
      stdin: new TextEncoder().encode(opts.stdin),
      stdout: opts.capture ? "pipe" : "ignore",
      stderr: opts.capture ? "pipe" : "ignore",
    });
    const run: Launched & { done: boolean; keeper: number | null } = {
      pid: proc.pid,
      spawnEpochMs,
      exitEpochMs: 0,
      code: null,
      stdout: "",
      stderr: "",
      cpuMs: null,
      peakAnonKB: null,
      keeperPeakAnonKB: null,
      keeperCpuMs: null,
      done: false,
      keeper: null,
    };
    const outs = opts.capture
      ? Promise.all([new Response(proc.stdout as ReadableStream).text(), new Response(proc.stderr as ReadableStream).text()])
      : Promise.resolve(["", ""]);
    const finished = Promise.all([outs, proc.exited]).then(([[out, err], code]) => {
      run.exitEpochMs = Date.now();
      run.done = true;
      run.code = code;
      run.stdout = out ?? "";
      run.stderr = err ?? "";
      const ru = proc.resourceUsage();
      run.cpuMs = ru ? Number(ru.cpuTime.user + ru.cpuTime.system) / 1000 : null;
    });
    return { run, finished };
  });
  const sample = () => {
    for (const { run } of live) {
      if (run.done) continue;
      const kb = anonKB(run.pid);
      if (kb !== null) run.peakAnonKB = Math.max(run.peakAnonKB ?? 0, kb);
      if (!opts.keeper) continue;
      run.keeper ??= keeperOf(run.pid);
      if (run.keeper === null) continue;
      const k = anonKB(run.keeper);
      if (k !== null) run.keeperPeakAnonKB = Math.max(run.keeperPeakAnonKB ?? 0, k);
      run.keeperCpuMs = cpuTicksMs(run.keeper) ?? run.keeperCpuMs;
    }
  };
  const timer = setInterval(sample, 100);
  await Promise.all(live.map((l) => l.finished));
  clearInterval(timer);
  return { wallS: (performance.now() - t0) / 1000, runs: live.map((l) => l.run) };
}

export function quantile(xs: number[], q: number): number | null {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] ?? null;
}
