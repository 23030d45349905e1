// The real opencode 1.18.33 (test/peers) against the project's own
// chat-completions stand-in, offline, its live stream read by the opencode
// reducer: what the adapter will be built on. Text, a tool call, a refused
// permission (exit 0, not a success), an exhausted 500 (short: the stand-in
// sends `retry-after: 0`), the cut-stream loop stopped by the loop detector,
// and resume in and out of the birth folder. Skipped, saying so, when the
// peer is not installed.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { LineFramer } from "../src/core/frame.ts";
import { LoopDetector, type LoopVerdict } from "../src/core/loop-detector.ts";
import { OpencodeReducer } from "../src/core/opencode/reducer.ts";
import { peerOrSkip } from "./peers/peers.ts";
import { startOpenAIStandin, type Reply } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import { spawnCollect, tempDir } from "./standins/util.ts";

const OPENCODE = peerOrSkip("opencode");
const suite = OPENCODE === null ? describe.skip : describe;

// What the model says next, per test; the title call is always answered.
let next: (n: number) => Reply = () => ({ text: "Hello from the stand-in." });
let calls = 0;
const standin = startOpenAIStandin((req) => (isTitleRequest(req) ? { text: "A title" } : next(++calls)));
const dir = tempDir("agentport-opencode-peer-");
const project = join(dir, "project");
const elsewhere = join(dir, "elsewhere");
mkdirSync(project, { recursive: true });
mkdirSync(elsewhere, { recursive: true });
writeFileSync(join(project, "notes.txt"), "line one\nline two\n");
const env = opencodeEnv(dir, standin.url);

afterAll(() => standin.stop());

function script(replies: Reply[]): void {
  calls = 0;
  next = (n) => replies[Math.min(n - 1, replies.length - 1)]!;
}

async function run(args: string[] = [], opts: { cwd?: string; timeoutMs?: number; env?: Record<string, string> } = {}) {
  const ran = await spawnCollect([OPENCODE!, "run", "--format", "json", ...args], {
    cwd: opts.cwd ?? project,
    env: { ...env, ...opts.env },
    stdin: "Say hi.",
    timeoutMs: opts.timeoutMs ?? 120_000,
  });
  const reducer = new OpencodeReducer({ cwd: project });
  const framer = new LineFramer(reducer);
  framer.push(new TextEncoder().encode(ran.stdout));
  framer.end();
  reducer.streamEnded();
  return { ...ran, r: reducer.reduction() };
}

suite("the real opencode against the stand-in, read by the reducer", () => {
  test("text: the last text, the session bound, per-step tokens and opencode's cost", async () => {
    script([{ text: "Hello from the stand-in.", usage: { input: 1000, output: 5 } }]);
    const ran = await run();
    expect(ran.code).toBe(0);
    expect(ran.r.failure).toBeNull();
    expect(ran.r.text).toBe("Hello from the stand-in.");
    expect(ran.r.sessionId).toStartWith("ses_");
    expect(ran.r.tokens).toEqual({ input: 1000, output: 5, cache_read: 0, cache_write: 0 });
    expect(ran.r.costMicroUsd).toBe(1000 * 1 + 5 * 2);
    // The prompt came from stdin: no quotes around it.
    expect(JSON.stringify(standin.requests.at(-1)?.messages ?? standin.requests)).toContain("Say hi.");
  });

  test("a tool call, then the answer", async () => {
    script([{ toolCall: { name: "read", arguments: { filePath: join(project, "notes.txt") } } }, { text: "It has two lines." }]);
    const ran = await run();
    expect(ran.code).toBe(0);
    expect(ran.r.failure).toBeNull();
    expect(ran.r.toolCalls).toBe(1);
    expect(ran.r.text).toBe("It has two lines.");
    expect(ran.r.summary.steps).toBe(2);
  });

  test("a refused permission: auto-rejected, exit 0, not a success", async () => {
    script([
      { toolCall: { name: "bash", arguments: { command: "touch made-by-bash.txt", description: "make a file" } } },
      { text: "never asked" },
    ]);
    const ran = await run([], { env: { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) } });
    expect(ran.code).toBe(0);
    expect(ran.r.refused).toEqual([{ kind: "permission", subject: "bash (auto-rejected)" }]);
    expect(ran.r.failure?.kind).toBe("agent_error");
  });

  test("an exhausted 500: one APIError record, exit 1", async () => {
    script([{ status: 500, body: "standin: internal error", retryAfter: 0 }]);
    const ran = await run();
    expect(ran.code).toBe(1);
    expect(calls).toBeGreaterThan(1);
    expect(ran.r.failure?.kind).toBe("provider_error");
    expect(ran.r.summary.api_error_status).toBe(500);
  });

  test("the cut stream: asked again at once, stopped by the loop detector", async () => {
    script([{ text: "This stre", cut: true }]);
    const loops: LoopVerdict[] = [];
    const reducer = new OpencodeReducer({ loop: new LoopDetector({ onLoop: (v) => loops.push(v) }) });
    const framer = new LineFramer(reducer);
    const proc = Bun.spawn([OPENCODE!, "run", "--format", "json"], {
      cwd: project,
      env,
      stdin: new TextEncoder().encode("Say hi."),
      stdout: "pipe",
      stderr: "ignore",
    });
    const guard = setTimeout(() => proc.kill("SIGKILL"), 120_000);
    for await (const chunk of proc.stdout) {
      framer.push(chunk);
      if (loops.length > 0) break;
    }
    proc.kill("SIGTERM");
    await proc.exited;
    clearTimeout(guard);
    expect(loops.length).toBe(1);
    expect(reducer.reduction().cutSteps).toBeGreaterThanOrEqual(4);
  });

  test("resume: the same session in its birth folder; from another folder it never ends", async () => {
    script([{ text: "First." }]);
    const first = await run();
    const id = first.r.sessionId!;
    script([{ text: "Again." }]);
    const again = await run(["-s", id]);
    expect(again.code).toBe(0);
    expect(again.r.sessionId).toBe(id);
    expect(again.r.text).toBe("Again.");
    const away = await run(["-s", id], { cwd: elsewhere, timeoutMs: 10_000 });
    expect(away.timedOut).toBe(true);
    expect(away.stdout).toBe("");
  });
});
