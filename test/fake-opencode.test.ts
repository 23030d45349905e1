// The fake opencode through the binary (`agentport fake-opencode run --format
// json`), each scenario read by the real reducer: the fake must say what real
// opencode says in the same case (test/opencode-reducer.test.ts reads the
// captures the same way).
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LineFramer } from "../src/core/frame.ts";
import { LoopDetector, type LoopVerdict } from "../src/core/loop-detector.ts";
import { OpencodeReducer } from "../src/core/opencode/reducer.ts";
import { BIN, tempDir } from "./helpers.ts";
import { spawnCollect } from "./standins/util.ts";

const home = tempDir("agentport-fake-opencode-");
const project = join(home, "project");
const elsewhere = join(home, "elsewhere");
mkdirSync(project, { recursive: true });
mkdirSync(elsewhere, { recursive: true });

function fake(
  args: string[],
  opts: { scenario?: string; cwd?: string; stdin?: string; timeoutMs?: number; env?: Record<string, string> } = {},
) {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_DATA_HOME: join(home, "data"),
    AGENTPORT_FAKE_SCENARIO: opts.scenario ?? "text",
    ...opts.env,
  };
  return spawnCollect([BIN, "fake-opencode", ...args], {
    cwd: opts.cwd ?? project,
    env,
    stdin: opts.stdin ?? "Say hi.",
    timeoutMs: opts.timeoutMs ?? 20_000,
  });
}

function reduce(stdout: string, loop?: LoopDetector) {
  const reducer = new OpencodeReducer({ loop });
  const framer = new LineFramer(reducer);
  framer.push(new TextEncoder().encode(stdout));
  framer.end();
  reducer.streamEnded();
  return reducer.reduction();
}

const RUN = ["run", "--format", "json"];

describe("the fake opencode, read by the opencode reducer", () => {
  test("text: a session id of its own, tokens and cost on the step, no terminal record", async () => {
    const ran = await fake(RUN);
    expect(ran.code).toBe(0);
    const r = reduce(ran.stdout);
    expect(r.failure).toBeNull();
    expect(r.text).toBe("Hello from the fake agent.");
    expect(r.sessionId).toStartWith("ses_");
    expect(r.tokens).toEqual({ input: 1000, output: 7, cache_read: 200, cache_write: 0 });
    expect(r.costMicroUsd).toBe(1014);
    expect(ran.records.map((x) => x.type)).toEqual(["step_start", "text", "step_finish"]);
  });

  test("tool: the refused call auto-rejects the permission and ends the run, exit 0, not a success", async () => {
    const ran = await fake(RUN, { scenario: "tool" });
    expect(ran.code).toBe(0);
    expect(ran.stderr).toContain("auto-rejecting");
    const r = reduce(ran.stdout);
    expect(r.toolCalls).toBe(3);
    expect(r.refused).toEqual([{ kind: "permission", subject: "bash (auto-rejected)" }]);
    expect(r.failure?.kind).toBe("agent_error");
  });

  test("error: invisible retries, then one APIError record, exit 1", async () => {
    const ran = await fake(RUN, { scenario: "error" });
    expect(ran.code).toBe(1);
    expect(ran.records.map((x) => x.type)).toEqual(["error"]);
    const r = reduce(ran.stdout);
    expect(r.failure?.kind).toBe("provider_error");
    expect(r.summary.api_error_status).toBe(500);
  });

  test("hang: only step_start, and no result once killed", async () => {
    const pidFile = join(home, "grandchild.pid");
    const ran = await fake(RUN, { scenario: "hang", timeoutMs: 1_500, env: { AGENTPORT_FAKE_PIDFILE: pidFile } });
    // The scenario's tool process outlives the fake (as opencode's bash tools do): this test reaps it.
    process.kill(Number(readFileSync(pidFile, "utf8")), "SIGKILL");
    expect(ran.timedOut).toBe(true);
    expect(reduce(ran.stdout).failure?.kind).toBe("no_result");
  });

  test("loop: a cut stream asked again forever trips the loop detector", async () => {
    const ran = await fake(RUN, { scenario: "loop", timeoutMs: 1_500 });
    expect(ran.timedOut).toBe(true);
    const loops: LoopVerdict[] = [];
    const r = reduce(ran.stdout, new LoopDetector({ onLoop: (v) => loops.push(v) }));
    expect(r.cutSteps).toBeGreaterThanOrEqual(5);
    expect(loops.length).toBe(1);
    expect(r.failure?.kind).toBe("provider_error");
  });

  test("no message and an empty stdin: exit 1", async () => {
    const none = await fake(RUN, { stdin: "" });
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("You must provide a message");
  });

  test("resume: the same session in its birth folder, a hang from another, an unknown id exits 1", async () => {
    const first = reduce((await fake(RUN)).stdout);
    const id = first.sessionId!;
    const again = await fake([...RUN, "-s", id]);
    expect(again.code).toBe(0);
    expect(reduce(again.stdout).sessionId).toBe(id);
    const forked = reduce((await fake([...RUN, "-s", id, "--fork"])).stdout);
    expect(forked.sessionId).not.toBe(id);
    const away = await fake([...RUN, "-s", id], { cwd: elsewhere, timeoutMs: 1_500 });
    expect(away.timedOut).toBe(true);
    expect(away.stdout).toBe("");
    const unknown = await fake([...RUN, "-s", "ses_nope"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("Session not found");
  });
});
