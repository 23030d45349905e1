// The fleet queue's costs on one PostgreSQL (a throwaway server, test/pg.ts):
//   1. claims: N claimers (one connection each, the worker's claim + finish)
//      draining a queue of tasks: claims per second, claim latency p50/p99;
//   2. submit → agent start on an idle worker (the fake claude's first log line);
//   3. one idle worker: CPU, peak RSS, private memory and the database's transactions per second;
//   4. T tasks of the fake claude through W workers × C at a time on this box,
//      against the same T `agentport run`s W × C at a time: wall time; the
//      busy workers' private memory (bench-fleet-memory.ts).
// Usage: bun run scripts/bench-fleet.ts [--claimers 12] [--claim-tasks 2000]
//          [--starts 5] [--idle-seconds 10] [--tasks 1000] [--workers 6]
//          [--concurrency 1] [--agent-ms 0] [--only claims,idle,throughput] [--bin PATH]
// --agent-ms: each fake agent sleeps that long first (the phases overlap: what busy workers hold);
// --bin: another agentport binary (an earlier build, for a before/after).
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SQL } from "bun";
import { Queue } from "../src/fleet/queue.ts";
import { fakeRunEnv, median, table } from "./bench-measure.ts";
import { REPO_ROOT } from "./bench-replay.ts";
import { sampleWorkers, workerMiB } from "./bench-fleet-memory.ts";

let BIN = join(REPO_ROOT, "dist", "agentport");
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function freshUrl(): Promise<string> {
  const { postgres } = await import("../test/pg.ts");
  return (await postgres()).fresh();
}

const task = (i: number) => ({
  prompt: `t${i}`,
  request: { agent: "claude" },
  repo: "file:///nowhere",
  ref: null,
  key: null,
  retries: 0,
  requires: [],
  bundle: null,
  resume: null,
  queue: "default",
});
const OFFER = { hostname: "bench", machineId: "bench-machine", labels: [], agents: ["claude"], workspaces: "/nowhere" };

/** 1. N claimers draining `count` tasks. */
async function claims(claimers: number, count: number): Promise<string[][]> {
  const url = await freshUrl();
  const seed = await Queue.open(url);
  for (let i = 0; i < count; i += 200)
    await Promise.all(Array.from({ length: Math.min(200, count - i) }, (_, j) => seed.submit(task(i + j))));
  const latencies: number[] = [];
  const queues = await Promise.all(Array.from({ length: claimers }, () => Queue.open(url)));
  const t0 = performance.now();
  await Promise.all(
    queues.map(async (q, n) => {
      for (;;) {
        const s = performance.now();
        const t = await q.claim(`w${n}`, OFFER, 30_000);
        latencies.push(performance.now() - s);
        if (t === null) return;
        await q.finish({ id: t.id, attempt: t.attempt, worker: `w${n}` }, { ok: true }, 0);
      }
    }),
  );
  const wall = (performance.now() - t0) / 1000;
  const done = (await seed.list()).filter((t) => t.state === "done").length;
  await Promise.all([seed, ...queues].map((q) => q.close()));
  return [
    [`${claimers} claimers, ${count} tasks`, `${(done / wall).toFixed(0)} claims/s (claim + fenced finish)`],
    ["claim latency p50 / p99", `${ms(quantile(latencies, 0.5))} / ${ms(quantile(latencies, 0.99))}`],
    ["tasks done / submitted", `${done} / ${count}`],
  ];
}

interface Box {
  dir: string;
  repo: string;
  log: string;
  env: Record<string, string>;
}

function box(url: string, steps: unknown[] = []): Box {
  const dir = join(tmpdir(), `agentport-bench-fleet-${process.pid}-${Math.random().toString(36).slice(2, 8)}`);
  const src = join(dir, "src");
  mkdirSync(src, { recursive: true });
  writeFileSync(join(src, "README"), "hello\n");
  const git = (args: string[], cwd = src) => Bun.spawnSync(["git", "-c", "user.name=b", "-c", "user.email=b@b", ...args], { cwd });
  git(["init", "-q", "-b", "main"]);
  git(["add", "."]);
  git(["commit", "-qm", "one"]);
  git(["clone", "-q", "--bare", src, join(dir, "repo.git")], dir);
  mkdirSync(join(dir, "bin"));
  symlinkSync(BIN, join(dir, "bin", "fake-claude"));
  const log = join(dir, "agents.log");
  const scenario = JSON.stringify({ steps: [...steps, { text: "done" }, { result: {} }] });
  const env = {
    ...fakeRunEnv(dir, join(dir, "home"), scenario),
    AGENTPORT_LEDGER: url,
    AGENTPORT_CLAUDE_BIN: join(dir, "bin", "fake-claude"),
    AGENTPORT_FAKE_LOG: log,
  };
  return { dir, repo: `file://${join(dir, "repo.git")}`, log, env };
}

const agentStarts = (b: Box) =>
  existsSync(b.log)
    ? readFileSync(b.log, "utf8")
        .split("\n")
        .filter((l) => l && !l.includes('"--version"')).length
    : 0;
const spawnWorker = (b: Box, args: string[] = []) =>
  Bun.spawn([BIN, "worker", "--agents", "claude", ...args], { env: b.env, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
const submit = (b: Box, prompt: string) =>
  Bun.spawnSync([BIN, "submit", "--repo", b.repo, prompt], { env: b.env, stdout: "pipe" }).stdout.toString().trim();

async function until(ok: () => boolean, limitMs: number): Promise<void> {
  const end = performance.now() + limitMs;
  while (!ok()) {
    if (performance.now() > end) throw new Error("timed out");
    await Bun.sleep(5);
  }
}

/** /proc/PID/stat: CPU seconds so far. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const rssMiB = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) / 1024;

/** 2 and 3: submit → agent start on an idle worker; the idle worker's own cost. */
async function idle(starts: number, idleSeconds: number): Promise<string[][]> {
  const url = await freshUrl();
  const b = box(url);
  const w = spawnWorker(b);
  const sql = new SQL(url, { max: 1 });
  try {
    await Bun.sleep(2_000);
    const db = new URL(url).pathname.slice(1);
    const xacts = async () =>
      Number(
        (await sql.unsafe<{ n: string }[]>(`SELECT xact_commit + xact_rollback AS n FROM pg_stat_database WHERE datname = $1`, [db]))[0]!.n,
      );
    const [cpu0, x0] = [cpuSeconds(w.pid), await xacts()];
    await Bun.sleep(idleSeconds * 1000);
    const [cpu1, x1] = [cpuSeconds(w.pid), await xacts()];
    const waits: number[] = [];
    for (let i = 0; i < starts; i++) {
      const before = agentStarts(b);
      const t0 = performance.now();
      submit(b, `start ${i}`);
      await until(() => agentStarts(b) > before, 30_000);
      waits.push(performance.now() - t0);
      await Bun.sleep(1_500);
    }
    return [
      [`submit → agent start, idle worker (${starts} tries)`, `median ${ms(median(waits))}, max ${ms(Math.max(...waits))}`],
      [`one idle worker over ${idleSeconds} s: CPU`, `${(((cpu1 - cpu0) / idleSeconds) * 100).toFixed(2)} % of a core`],
      ["one idle worker: peak RSS", `${rssMiB(w.pid).toFixed(1)} MiB`],
      ["one idle worker: private memory (smaps Anonymous)", `${workerMiB(w.pid, BIN).toFixed(1)} MiB`],
      ["one idle worker: database transactions/s (stats lag ≤ 0.5 s)", `${((x1 - x0) / idleSeconds).toFixed(1)}`],
    ];
  } finally {
    w.kill("SIGTERM");
    await w.exited;
    await sql.close();
    rmSync(b.dir, { recursive: true, force: true });
  }
}

/** 4. T tasks through W workers × C at a time, against T `run`s W × C at a time. */
async function throughput(tasks: number, workers: number, concurrency: number, agentMs: number): Promise<string[][]> {
  const slots = workers * concurrency;
  const b = box(await freshUrl(), agentMs > 0 ? [{ sleep: agentMs }] : []);
  try {
    for (let i = 0; i < tasks; i += 50)
      await Promise.all(
        Array.from(
          { length: Math.min(50, tasks - i) },
          (_, j) => Bun.spawn([BIN, "submit", "--repo", b.repo, `t${i + j}`], { env: b.env, stdout: "ignore" }).exited,
        ),
      );
    const t0 = performance.now();
    const ws = Array.from({ length: workers }, (_, n) =>
      Bun.spawn([BIN, "worker", "--agents", "claude", "--concurrency", String(concurrency)], {
        env: { ...b.env, AGENTPORT_HOME: join(b.dir, `home-${n}`) },
        stdin: "ignore",
        stdout: "ignore",
        stderr: "ignore",
      }),
    );
    const waited = Bun.spawn(
      [
        BIN,
        "wait",
        "--timeout",
        "7200",
        ...Bun.spawnSync([BIN, "tasks", "--json"], { env: b.env, stdout: "pipe" })
          .stdout.toString()
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l).id as string),
      ],
      { env: b.env, stdout: "ignore" },
    );
    const memory = sampleWorkers(
      ws.map((w) => w.pid),
      BIN,
    );
    const code = await waited.exited;
    const fleetWall = (performance.now() - t0) / 1000;
    const busy = memory.stop();
    for (const w of ws) w.kill("SIGTERM");
    await Promise.all(ws.map((w) => w.exited));
    const runs = agentStarts(b);
    const direct = join(b.dir, "direct");
    Bun.spawnSync(["git", "clone", "-q", b.repo, direct]);
    const t1 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: slots }, async () => {
        while (next < tasks) {
          next++;
          await Bun.spawn([BIN, "run", "--json", "--progress", "off", "--agent", "claude", "direct"], {
            cwd: direct,
            env: { ...b.env, AGENTPORT_LEDGER: "" },
            stdout: "ignore",
            stderr: "ignore",
          }).exited;
        }
      }),
    );
    const directWall = (performance.now() - t1) / 1000;
    return [
      [`${tasks} tasks through ${workers} workers × ${concurrency}`, `${fleetWall.toFixed(1)} s (wait exit ${code}; ${runs} agent runs)`],
      [`the same ${tasks} as \`run\`, ${slots} at a time (SQLite ledger)`, `${directWall.toFixed(1)} s`],
      ["fleet / direct", `${(fleetWall / directWall).toFixed(2)}×`],
      [
        `busy workers' agentport private memory, per worker (peak / median; ${concurrency} at a time)`,
        `${(busy.peakMiB / workers).toFixed(1)} / ${(busy.medianMiB / workers).toFixed(1)} MiB`,
      ],
    ];
  } finally {
    rmSync(b.dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { values: v } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      claimers: { type: "string", default: "12" },
      "claim-tasks": { type: "string", default: "2000" },
      starts: { type: "string", default: "5" },
      "idle-seconds": { type: "string", default: "10" },
      tasks: { type: "string", default: "1000" },
      workers: { type: "string", default: "6" },
      concurrency: { type: "string", default: "1" },
      "agent-ms": { type: "string", default: "0" },
      only: { type: "string", default: "claims,idle,throughput" },
      bin: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (v.help) {
    console.log(
      "usage: bun run scripts/bench-fleet.ts [--claimers 12] [--claim-tasks 2000] [--starts 5] [--idle-seconds 10] [--tasks 1000] [--workers 6] [--concurrency 1] [--agent-ms 0] [--only claims,idle,throughput] [--bin PATH]",
    );
    process.exit(0);
  }
  if (v.bin !== undefined) BIN = v.bin;
  if (!existsSync(BIN)) throw new Error(`${BIN}: build it first (bun run scripts/build.ts)`);
  const only = v.only.split(",");
  const rows = [
    ...(only.includes("claims") ? await claims(Number(v.claimers), Number(v["claim-tasks"])) : []),
    ...(only.includes("idle") ? await idle(Number(v.starts), Number(v["idle-seconds"])) : []),
    ...(only.includes("throughput")
      ? await throughput(Number(v.tasks), Number(v.workers), Number(v.concurrency), Number(v["agent-ms"]))
      : []),
  ];
  console.log(table(["fleet", "measured"], rows));
  const { stopPostgres } = await import("../test/pg.ts");
  await stopPostgres();
}
