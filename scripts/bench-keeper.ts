/**
 * bench-keeper.ts — what the keeper (`agentport __keeper`, src/io/keeper.ts)
 * costs per agentport process, and how fast it ends an agent once agentport
 * is gone.
 *
 * Run by hand (not part of the test suite), after `bun run scripts/build.ts`:
 *   bun run scripts/bench-keeper.ts [--runs 20]
 *
 * For each run: the keeper is started as agentport starts it (the compiled
 * binary, its own session, a pipe on stdin), told to watch a `sleep` that has
 * a grandchild in a session of its own, then its pipe is closed.
 *   spawn       the synchronous Bun.spawn of the keeper: what agentport's
 *               critical path pays, once per agentport process
 *   watch       writing `watch PID START` to the keeper (once per agent)
 *   reap walk   one /proc walk and tree cut (killTree at every agent's end)
 *   cpu         the keeper's user + system time over its whole life (~1 s)
 *   rss         its peak resident memory (VmHWM), and its own (RssAnon): the
 *               rest is the binary's file pages, shared with agentport
 *   kill        pipe closed → the agent and its grandchild both gone
 * Medians in ms (rss in MiB).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { isRunning, listProcesses, processStart, treeOf } from "../src/io/proc.ts";
import { requireAgentport } from "./bench-replay.ts";
import { median, table } from "./bench-measure.ts";

const TICKS = 100; // USER_HZ on Linux

function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return ((Number(f[11]) + Number(f[12])) * 1000) / TICKS;
}

/** A field of /proc/PID/status in MiB: VmHWM (peak resident), RssAnon (its own memory, not the binary's shared pages). */
function statusMiB(pid: number, field: "VmHWM" | "RssAnon"): number {
  const line =
    readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${field}:`)) ?? `${field}: 0 kB`;
  return Number(line.split(/\s+/)[1]) / 1024;
}

async function waitUntil(check: () => boolean, ms: number): Promise<boolean> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) return false;
    await Bun.sleep(1);
  }
  return true;
}

export interface KeeperFigures {
  spawnMs: number;
  watchMs: number;
  walkMs: number;
  cpuMs: number;
  rssMiB: number;
  anonMiB: number;
  killMs: number;
  survivors: number;
}

export async function benchKeeper(opts: { runs: number }): Promise<KeeperFigures> {
  const bin = requireAgentport();
  const rows: KeeperFigures[] = [];
  for (let i = 0; i < opts.runs; i++) {
    // The agent: a shell in its own group whose child starts a session of its own.
    const agent = Bun.spawn(["sh", "-c", "setsid sleep 60 & exec sleep 60"], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
      detached: true,
    });
    await Bun.sleep(50);
    const t0 = performance.now();
    const keeper = Bun.spawn([bin, "__keeper"], { stdin: "pipe", stdout: "ignore", stderr: "ignore", detached: true });
    const spawnMs = performance.now() - t0;
    const t1 = performance.now();
    keeper.stdin.write(`watch ${agent.pid} ${processStart(agent.pid) ?? "-"}\n`);
    keeper.stdin.flush();
    const watchMs = performance.now() - t1;
    const t2 = performance.now();
    const tree = treeOf([agent.pid], [agent.pid], listProcesses());
    const walkMs = performance.now() - t2;
    await Bun.sleep(1_000); // a short run: the keeper starts, watches, looks at the tree once
    const rssMiB = statusMiB(keeper.pid, "VmHWM");
    const anonMiB = statusMiB(keeper.pid, "RssAnon");
    const cpu = cpuMs(keeper.pid); // start-up and a second of watching; the sweep itself is one walk more
    const t3 = performance.now();
    await keeper.stdin.end();
    const gone = await waitUntil(() => tree.every((p) => !isRunning(p.pid)), 5_000);
    const killMs = performance.now() - t3;
    await keeper.exited;
    const survivors = tree.filter((p) => isRunning(p.pid)).length;
    for (const p of tree) if (isRunning(p.pid)) process.kill(p.pid, "SIGKILL");
    rows.push({ spawnMs, watchMs, walkMs, cpuMs: cpu, rssMiB, anonMiB, killMs: gone ? killMs : Number.NaN, survivors });
  }
  const pick = (k: keyof KeeperFigures) => median(rows.map((r) => r[k]));
  return {
    spawnMs: pick("spawnMs"),
    watchMs: pick("watchMs"),
    walkMs: pick("walkMs"),
    cpuMs: pick("cpuMs"),
    rssMiB: pick("rssMiB"),
    anonMiB: pick("anonMiB"),
    killMs: pick("killMs"),
    survivors: rows.reduce((n, r) => n + r.survivors, 0),
  };
}

export function keeperTable(f: KeeperFigures): string {
  return table(
    ["keeper", "median"],
    [
      ["spawn (agentport's critical path, once per process)", `${f.spawnMs.toFixed(2)} ms`],
      ["watch message (once per agent)", `${f.watchMs.toFixed(3)} ms`],
      ["/proc walk and tree cut (at every agent's end)", `${f.walkMs.toFixed(2)} ms`],
      ["keeper CPU: start-up and 1 s of watching", `${f.cpuMs.toFixed(0)} ms`],
      ["keeper peak RSS (mostly the binary's pages, shared)", `${f.rssMiB.toFixed(1)} MiB`],
      ["keeper's own memory (RssAnon)", `${f.anonMiB.toFixed(1)} MiB`],
      ["pipe closed → agent and grandchild gone", `${f.killMs.toFixed(1)} ms`],
      ["processes left", String(f.survivors)],
    ],
  );
}

if (import.meta.main) {
  const { values } = parseArgs({ args: Bun.argv.slice(2), options: { runs: { type: "string", default: "20" } } });
  const figures = await benchKeeper({ runs: Number(values.runs) });
  console.log(keeperTable(figures));
}
