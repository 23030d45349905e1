/**
 * bench-opencode-serve.ts — what opencode's serve mode costs and saves, with
 * the real opencode (test/peers) against the loopback chat-completions
 * stand-in, offline (the e2e tests' environment).
 *
 * Run by hand (not part of the test suite), after `bun run scripts/build.ts`:
 *   bun run scripts/bench-opencode-serve.ts [--runs 5] [--arms 3]
 *
 *   start      `opencode serve` spawned → its "listening on" line (startOpencodeServer)
 *   run        `agentport run --agent opencode --serve` vs `agentport run --agent opencode`,
 *              one text answer, wall time of the whole command, alternated
 *   arms       N forks of one prime session prompted at once on one server
 *              (what `bon` over one server does) vs N `opencode run -s PRIME --fork`
 *              processes at once; per-arm time = wall / N
 * Medians in ms.
 */
import "../src/io/zod.ts";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { LineSink } from "../src/core/frame.ts";
import type { OpencodeServer } from "../src/io/opencode-server.ts";
import { startOpencodeServer } from "../src/io/opencode-start.ts";
import { startOpenAIStandin } from "../test/standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "../test/standins/opencode.ts";
import { removeTempDirs, spawnCollect, tempDir } from "../test/standins/util.ts";
import { requireAgentport } from "./bench-replay.ts";
import { median, table } from "./bench-measure.ts";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" }, arms: { type: "string", default: "3" } } });
const RUNS = Number(values.runs);
const ARMS = Number(values.arms);
const OPENCODE = join(import.meta.dir, "..", "test", "peers", "node_modules", ".bin", "opencode");
const BIN = requireAgentport();

const standin = startOpenAIStandin((req) =>
  isTitleRequest(req) ? { text: "A title" } : { text: "Hello from the stand-in.", usage: { input: 100, output: 5 } },
);
const dir = tempDir("agentport-bench-serve-");
const project = join(dir, "project");
mkdirSync(project, { recursive: true });
const env = opencodeEnv(dir, standin.url);
const agentportEnv = { ...env, AGENTPORT_HOME: join(dir, "agentport"), AGENTPORT_OPENCODE_BIN: OPENCODE };

/** Resolves when every session in `ids` has said session.idle. */
function idleWatch(server: OpencodeServer) {
  const idle = new Set<string>();
  const waiters: (() => void)[] = [];
  const sink: LineSink = {
    line: (text) => {
      const e = JSON.parse(text);
      if (e.type === "session.idle") idle.add(e.properties.sessionID);
      for (const w of waiters.splice(0)) w();
    },
    oversize: () => {},
    framingError: () => {},
    unterminated: () => {},
  };
  const stream = server.events(sink);
  const until = async (ids: string[]) => {
    while (!ids.every((id) => idle.has(id))) await new Promise<void>((r) => waiters.push(r));
  };
  return { stream, until };
}

async function timeStart(): Promise<number> {
  const server = await startOpencodeServer({ bin: OPENCODE, cwd: project, env });
  const ms = server.startMs;
  await server.stop();
  return ms;
}

async function timeRun(serve: boolean): Promise<number> {
  const t0 = performance.now();
  const ran = await spawnCollect([BIN, "run", "--agent", "opencode", ...(serve ? ["--serve"] : []), "--json", "-"], {
    cwd: project,
    env: agentportEnv,
    stdin: "Say hi",
    timeoutMs: 120_000,
  });
  if (ran.code !== 0) throw new Error(`run ${serve ? "--serve " : ""}failed: ${ran.stderr.slice(-400)}`);
  return performance.now() - t0;
}

async function armsOnOneServer(): Promise<number> {
  const server = await startOpencodeServer({ bin: OPENCODE, cwd: project, env });
  try {
    const watch = idleWatch(server);
    await watch.stream.opened;
    const prime = await server.createSession({ title: "prime" });
    await server.promptAsync(prime.id, { text: "Prime the context." });
    await watch.until([prime.id]);
    const t0 = performance.now();
    const forks = await Promise.all(Array.from({ length: ARMS }, () => server.forkSession(prime.id)));
    await Promise.all(forks.map((f, i) => server.promptAsync(f.id, { text: `Arm ${i + 1}: say hi.` })));
    await watch.until(forks.map((f) => f.id));
    const ms = performance.now() - t0;
    watch.stream.close();
    return ms;
  } finally {
    await server.stop();
  }
}

async function armsAsProcesses(): Promise<number> {
  const first = await spawnCollect([OPENCODE, "run", "--format", "json"], {
    cwd: project,
    env,
    stdin: "Prime the context.",
    timeoutMs: 120_000,
  });
  const prime = JSON.parse(first.stdout.split("\n")[0]!).sessionID as string;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: ARMS }, (_, i) =>
      spawnCollect([OPENCODE, "run", "--format", "json", "-s", prime, "--fork"], {
        cwd: project,
        env,
        stdin: `Arm ${i + 1}: say hi.`,
        timeoutMs: 120_000,
      }),
    ),
  );
  return performance.now() - t0;
}

const starts: number[] = [];
const serveRuns: number[] = [];
const oneShotRuns: number[] = [];
const serverArms: number[] = [];
const processArms: number[] = [];
// One warm-up of each (opencode's first start in a fresh HOME migrates its database).
await timeStart();
await timeRun(false);
for (let i = 0; i < RUNS; i++) {
  starts.push(await timeStart());
  serveRuns.push(await timeRun(true));
  oneShotRuns.push(await timeRun(false));
  serverArms.push(await armsOnOneServer());
  processArms.push(await armsAsProcesses());
}
await standin.stop();
removeTempDirs();
const ms = (xs: number[]) => `${Math.round(median(xs))} (${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})`;
console.log(
  table(
    ["measure (ms, median of " + RUNS + ", min–max)", "value"],
    [
      ["opencode serve: spawn → listening", ms(starts)],
      ["agentport run --agent opencode --serve (whole command)", ms(serveRuns)],
      ["agentport run --agent opencode (one-shot, whole command)", ms(oneShotRuns)],
      [`${ARMS} arms, forks on one server: wall / per arm`, `${ms(serverArms)} / ${Math.round(median(serverArms) / ARMS)}`],
      [
        `${ARMS} arms, ${ARMS} opencode run --fork processes: wall / per arm`,
        `${ms(processArms)} / ${Math.round(median(processArms) / ARMS)}`,
      ],
    ],
  ),
);
