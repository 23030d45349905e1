/**
 * bench-measure.ts — how every benchmark measures a process: wall time here,
 * peak RSS and CPU from GNU time, peak private memory sampled from /proc;
 * and the medians and tables they report with.
 */
import { existsSync, readFileSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const GNU_TIME = "/usr/bin/time";

export interface Measured {
  wallS: number;
  rssKB: number | null;
  /**
   * Peak private memory (smaps_rollup `Anonymous`: heap, JIT code, buffers),
   * sampled every 10 ms on Linux. RSS also counts the runtime's code pages,
   * which every process of the same binary shares: this is what each extra
   * process costs a box.
   */
  privateKB: number | null;
  /** user + system CPU seconds, from GNU time. */
  cpuS: number | null;
  code: number | null;
  signal: string | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
}

/**
 * Run argv as a subprocess, timing wall clock here and peak RSS via GNU time
 * (`-f %M -o FILE`, so the child's own stderr stays clean). With timeoutS, the
 * command is wrapped in coreutils `timeout` (TERM, then KILL 5 s later).
 */
export async function runMeasured(argv: string[], opts: { timeoutS?: number } = {}): Promise<Measured> {
  let cmd = argv;
  const timeoutBin = opts.timeoutS ? Bun.which("timeout") : null;
  if (opts.timeoutS && timeoutBin) cmd = [timeoutBin, "-k", "5", String(opts.timeoutS), ...cmd];
  const haveTime = existsSync(GNU_TIME);
  const rssFile = join(tmpdir(), `.agentport-rss-${process.pid}-${Math.floor(performance.now() * 1000)}.txt`);
  if (haveTime) cmd = [GNU_TIME, "-f", "%M %U %S", "-o", rssFile, ...cmd];
  const t0 = performance.now();
  const proc = Bun.spawn(cmd, {
    stdout: "pipe",
    stderr: "pipe",
    stdin: "ignore",
    // Backstop only, for hosts without coreutils `timeout`.
    ...(opts.timeoutS && !timeoutBin ? { timeout: opts.timeoutS * 1000, killSignal: "SIGKILL" as const } : {}),
  });
  const sampler = samplePrivate(proc.pid);
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  const code = await proc.exited;
  const wallS = (performance.now() - t0) / 1000;
  const privateKB = sampler.stop();
  let rssKB: number | null = null;
  let cpuS: number | null = null;
  if (haveTime && existsSync(rssFile)) {
    // GNU time may prepend "Command exited with non-zero status N" / "Command terminated by signal N".
    const last = (readFileSync(rssFile, "utf8").trim().split("\n").pop() ?? "").trim().split(/\s+/).map(Number);
    if (last.length === 3 && last.every(Number.isFinite)) {
      rssKB = last[0]!;
      cpuS = last[1]! + last[2]!;
    }
    unlinkSync(rssFile);
  }
  // coreutils timeout exits 124 on TERM-timeout, 137 (128+9) when it had to KILL.
  const timedOut = Boolean(opts.timeoutS) && (timeoutBin ? code === 124 || code === 137 : proc.signalCode === "SIGKILL");
  return {
    wallS,
    rssKB,
    privateKB,
    cpuS,
    code,
    signal: proc.signalCode == null ? null : String(proc.signalCode),
    timedOut,
    stdout,
    stderr,
  };
}

/** The measured process under GNU time and timeout: the leaf of the single-child chain from `pid`. */
function leafOf(pid: number): number {
  let leaf = pid;
  for (let depth = 0; depth < 4; depth++) {
    let children: string[];
    try {
      children = readFileSync(`/proc/${leaf}/task/${leaf}/children`, "utf8").trim().split(/\s+/).filter(Boolean);
    } catch {
      return leaf;
    }
    if (children.length !== 1) return leaf;
    leaf = Number(children[0]);
  }
  return leaf;
}

/** Peak `Anonymous` of the measured process, every 10 ms until stop(); null where /proc has no smaps_rollup. */
function samplePrivate(pid: number): { stop(): number | null } {
  let peak: number | null = null;
  const sample = () => {
    try {
      const rollup = readFileSync(`/proc/${leafOf(pid)}/smaps_rollup`, "utf8");
      const kb = Number(/^Anonymous:\s+(\d+) kB/m.exec(rollup)?.[1]);
      if (Number.isFinite(kb)) peak = Math.max(peak ?? 0, kb);
    } catch {
      // not started yet, or gone
    }
  };
  const timer = setInterval(sample, 10);
  return {
    stop: () => {
      clearInterval(timer);
      return peak;
    },
  };
}

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

export function table(head: string[], rows: string[][]): string {
  const all = [head, ...rows];
  const w = head.map((_, c) => Math.max(...all.map((r) => (r[c] ?? "").length)));
  const line = (r: string[]) => r.map((x, c) => (c === 0 ? x.padEnd(w[c] as number) : x.padStart(w[c] as number))).join("  ");
  return [line(head), w.map((n) => "-".repeat(n)).join("  "), ...rows.map(line)].join("\n");
}

export function tail(s: string, n = 600): string {
  const t = s.trim();
  return t.length > n ? `…${t.slice(-n)}` : t;
}

/** A fake agent's run environment for a benchmark: a private HOME and agentport home, no config or gateway, the scenario. */
export function fakeRunEnv(dir: string, home: string, scenario: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: dir,
    NO_COLOR: "1",
    AGENTPORT_HOME: home,
    AGENTPORT_CONFIG: "",
    AGENTPORT_GATEWAY: "",
    PI_CODING_AGENT_DIR: `${dir}/pi-agent`,
    AGENTPORT_FAKE_SCENARIO: scenario,
  };
}
