// Nothing an agent started outlives its run: a tool step that double-forks a
// `setsid sleep`, and one that leaves a listener on a loopback port in a
// session of its own. agentport is their subreaper (Linux): after the run
// neither lives, the port is free, and the verdict counts what was reaped.
// Under --isolate the sandbox's PID namespace ends them too. Through the
// compiled binary with the fake claude.
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { isRunning, waitGone } from "../src/io/proc.ts";
import { agentport, fakeClaudeDir, sleepsWithMarker } from "./helpers.ts";
import { bwrapWorks } from "./isolation.ts";

let dir: string;
let claude: string;
beforeAll(() => {
  ({ dir, claude } = fakeClaudeDir("agentport-stray-"));
});

async function run(command: string, flags: string[] = [], after: unknown[] = []) {
  const scenario = JSON.stringify({
    steps: [{ tool: { name: "Bash", input: { command }, run: command } }, ...after, { text: "Done." }, { result: {} }],
  });
  const ran = await agentport(["run", "--claude-bin", claude, "--json", "--progress", "off", ...flags, "go"], {
    cwd: dir,
    env: { AGENTPORT_HOME: join(dir, "home"), AGENTPORT_FAKE_SCENARIO: scenario },
  });
  return { ...ran, verdict: VerdictSchema.parse(JSON.parse(ran.stdout)) };
}

/** A loopback port nothing listens on now. */
function freePort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

const portFree = (port: number): boolean => {
  try {
    Bun.listen({ hostname: "127.0.0.1", port, socket: { data() {} } }).stop(true);
    return true;
  } catch {
    return false;
  }
};

describe.if(process.platform === "linux")("stray descendants", () => {
  test("a double-forked `setsid sleep 1000` is reaped with the run and counted", async () => {
    const pidFile = join(dir, "daemon.pid");
    const { code, verdict } = await run(`sh -c 'setsid sleep 1000 & echo $! > ${pidFile}'`);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(pid).toBeGreaterThan(1);
    // One look, so a failure shows all of it.
    expect({ code, gone: await waitGone(pid, 1_000), reaped: verdict.summary.reaped }).toEqual({ code: 0, gone: true, reaped: 1 });
  });

  test("a listener left on a loopback port in a session of its own: gone, the port free", async () => {
    const port = freePort();
    const pidFile = join(dir, "server.pid");
    const serve = `setsid bun -e 'Bun.serve({ hostname: "127.0.0.1", port: ${port}, fetch: () => new Response("up") })' >/dev/null 2>&1 & echo $! > ${pidFile}`;
    const { code, verdict } = await run(
      `${serve}; for i in $(seq 100); do bun -e 'await fetch("http://127.0.0.1:${port}")' 2>/dev/null && break; sleep 0.1; done`,
    );
    expect(code).toBe(0);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(await waitGone(pid, 1_000)).toBe(true);
    expect(portFree(port)).toBe(true);
    expect(verdict.summary.reaped).toBeGreaterThanOrEqual(1);
  });

  test("a run that leaves nothing behind reaps nothing", async () => {
    const { verdict } = await run("true");
    expect(verdict.summary.reaped).toBeUndefined();
    expect(isRunning(process.pid)).toBe(true);
  });
});

describe.if(process.platform === "linux" && bwrapWorks())("stray descendants under --isolate", () => {
  test("a double-forked `setsid sleep` seen alive during the run is gone with it", async () => {
    const marker = `1000.${process.pid}${Math.floor(Math.random() * 1e6)}`;
    const running = run(`sh -c 'setsid sleep ${marker} </dev/null >/dev/null 2>&1 &'`, ["--isolate"], [{ sleep: 1_500 }]);
    let seen: number[] = [];
    for (let i = 0; i < 100 && seen.length === 0; i++) {
      await Bun.sleep(20);
      seen = sleepsWithMarker(marker);
    }
    const { code, verdict } = await running;
    expect({ code, isolated: verdict.isolated, seen: seen.length, gone: await waitGone(seen[0] ?? 0, 1_000) }).toEqual({
      code: 0,
      isolated: true,
      seen: 1,
      gone: true,
    });
  }, 30_000);
});
