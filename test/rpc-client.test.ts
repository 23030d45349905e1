// The RPC client against the fake pi in `--mode rpc` (the compiled binary
// through a symlink named `fake-pi`), in both dialects: 0.73.1 (turns end at
// agent_end, decided with a barrier) and 0.85 (agent_settled). Plus the
// turn-end rule on every event order of ground truth §3, as a pure state machine.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newSessionFile } from "../src/agents/pi/run.ts";
import type { PiCapabilities, PiFlag } from "../src/core/pi/capabilities.ts";
import { PI_FLAGS } from "../src/core/pi/capabilities.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import { VerdictSchema } from "../src/core/verdict.ts";
import { isRunning, waitGone } from "../src/io/proc.ts";
import { PiRpcClient, PiRpcError, type PiRpcStartOptions, type RpcCommand, type RpcSession } from "../src/rpc/client.ts";
import { TurnEndDetector, dialectSettles } from "../src/rpc/turn-end.ts";
import { BIN, tempDir } from "./helpers.ts";

type Json = Record<string, any>;
type Dialect = "0.73.1" | "0.85";

let fake: string;
const made: string[] = [];
const clients: PiRpcClient[] = [];

beforeAll(() => {
  const dir = tempDir("agentport-rpc-fake-");
  made.push(dir);
  fake = join(dir, "fake-pi");
  symlinkSync(BIN, fake);
});

afterAll(async () => {
  for (const c of clients) await c.close();
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function caps(dialect: Dialect): PiCapabilities {
  const flags = Object.fromEntries(PI_FLAGS.map((f) => [f, true])) as Record<PiFlag, boolean>;
  if (dialect === "0.73.1") {
    flags["--session-id"] = false;
    flags["--approve"] = false;
  }
  return { version: dialect === "0.73.1" ? "0.73.1" : "0.85.0", flags };
}

interface World {
  root: string;
  proj: string;
  agent: string;
  sessions: string;
  env: Record<string, string>;
}

function world(dialect: Dialect, scenario: Json): World {
  const root = realpathSync(tempDir("agentport-rpc-box-"));
  made.push(root);
  const w = {
    root,
    proj: join(root, "proj"),
    agent: join(root, "agent"),
    sessions: join(root, "sessions"),
    env: {} as Record<string, string>,
  };
  for (const d of [w.proj, w.agent, join(root, "home")]) mkdirSync(d, { recursive: true });
  w.env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(root, "home"),
    PI_CODING_AGENT_DIR: w.agent,
    NO_COLOR: "1",
    AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario),
    AGENTPORT_FAKE_PI_DIALECT: dialect,
  };
  return w;
}

interface Started {
  client: PiRpcClient;
  w: World;
  id: string;
  sessions: RpcSession[];
  progress: ProgressEvent[];
}

async function start(
  dialect: Dialect,
  scenario: Json,
  extra: Partial<PiRpcStartOptions> = {},
  w = world(dialect, scenario),
): Promise<Started> {
  const id = crypto.randomUUID();
  // 0.73.1 has no --session-id: agentport names the session file, header first.
  const sessionFile = dialect === "0.73.1" && extra.fork === undefined ? newSessionFile(w.sessions, id, extra.cwd ?? w.proj) : null;
  const sessions: RpcSession[] = [];
  const progress: ProgressEvent[] = [];
  const client = await PiRpcClient.start({
    bin: fake,
    caps: caps(dialect),
    cwd: w.proj,
    env: w.env,
    sessionDir: w.sessions,
    sessionFile,
    sessionId: id,
    model: "standin/standin-model",
    gateway: "",
    direct: true,
    extensions: [],
    stderrFile: join(w.root, `stderr-${id}.log`),
    maxLineBytes: 8 * 1024 * 1024,
    commandTimeoutMs: 10_000,
    onSession: (s) => sessions.push(s),
    onProgress: (e) => progress.push(e),
    ...extra,
  });
  clients.push(client);
  return { client, w, id, sessions, progress };
}

const text = (t: string, usage?: Json): Json => (usage ? { text: t, usage } : { text: t });
const header = (file: string): Json => JSON.parse(readFileSync(file, "utf8").split("\n")[0] ?? "{}");

async function until(check: () => boolean, ms = 5_000): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

for (const dialect of ["0.73.1", "0.85"] as const) {
  describe(`rpc client, fake pi ${dialect}`, () => {
    test("a prime turn: judged like a phase, with its own tokens and cost", async () => {
      const { client, id, sessions } = await start(dialect, { turns: [[text("Primed.")]] });
      expect(client.sessionId).toBe(id);
      expect(sessions).toEqual([{ sessionId: id, sessionFile: client.sessionFile, reason: "start", parentId: null, parentFile: null }]);
      const turn = await client.prompt("Read the spec");
      VerdictSchema.parse(turn.verdict);
      expect(turn.verdict).toMatchObject({
        agent: "pi",
        session_id: id,
        status: "completed",
        ok: true,
        text: "Primed.",
        stop_reason: "stop",
        refused: [],
      });
      expect(turn.verdict.tokens).toEqual({ input: 100, output: 20, cache_read: 0, cache_write: 0 });
      expect(turn.verdict.cost_micro_usd).toBe(450);
      // get_session_stats after minus before agrees with the stream.
      expect(turn.own).toEqual({ tokens: turn.verdict.tokens, costMicroUsd: 450 });
      expect(turn.session).toEqual(turn.own);
      expect(turn.exitCode).toBe(0);
      expect(turn.verdict.summary.agent_ends).toBe(1);
      expect(existsSync(client.sessionFile ?? "")).toBe(true);
      await client.close();
    });

    test("a confirm dialog in the first turn: cancelled at once, recorded as refused, the turn goes on", async () => {
      const { client } = await start(dialect, {
        turns: [
          [
            text("I will clean up."),
            { confirm: { title: "Dangerous!\u001b[31m rm -rf build?", message: "Allow rm -rf?" } },
            { tool: { name: "bash", args: { command: "rm -rf build" }, result: "removed" } },
            text("It was blocked."),
          ],
          [text("Second turn.")],
        ],
      });
      const turn = await client.prompt("Clean up");
      expect(turn.verdict).toMatchObject({ status: "completed", ok: true, text: "It was blocked." });
      expect(turn.verdict.refused).toEqual([{ kind: "dialog", subject: "Dangerous! rm -rf build?" }]);
      expect(turn.verdict.summary).toMatchObject({ tool_errors: 1, dialogs_refused: 1 });
      const second = await client.prompt("Again");
      expect(second.verdict.refused).toEqual([]);
      // The blocked call's result in the session is the hook's reason.
      const messages = ((await client.request({ type: "get_messages" })) as Json).data.messages as Json[];
      expect(messages.find((m) => m.role === "toolResult")).toMatchObject({
        isError: true,
        content: [{ type: "text", text: "Blocked by user" }],
      });
      await client.close();
    });

    test("select/input/editor are refused too; notify and setStatus are fire-and-forget, ignored", async () => {
      const ui = (method: string, extra: Json) => ({
        raw: JSON.stringify({ type: "extension_ui_request", id: `ui-${method}`, method, ...extra }),
      });
      const { client } = await start(dialect, {
        turns: [
          [
            ui("notify", { message: "Extension loaded!", notifyType: "info" }),
            ui("select", { title: "Pick one", options: ["a", "b"] }),
            ui("setStatus", { statusKey: "k", statusText: "busy" }),
            ui("editor", { title: "", prefill: "x" }),
            text("Done."),
          ],
        ],
      });
      const turn = await client.prompt("go");
      expect(turn.verdict.status).toBe("completed");
      expect(turn.verdict.refused).toEqual([
        { kind: "dialog", subject: "Pick one" },
        { kind: "dialog", subject: "editor" },
      ]);
      await client.close();
    });

    test("a pi that cannot start: start() rejects at once with its exit code and stderr", async () => {
      const w = world(dialect, {});
      const error = (await start(dialect, {}, { extensions: [join(w.root, "missing.ts")] }, w).catch((e: unknown) => e)) as PiRpcError;
      expect(error).toBeInstanceOf(PiRpcError);
      expect(error.code).toBe("exited");
      expect(error.message).toStartWith("pi (rpc) exited with code 1 while waiting for get_state: ");
      expect(error.message).toContain("Failed to load extension");
    });

    test("clone before any prompt fails; two clones from the same prime, each with its own stats; switch back", async () => {
      const { client, id, sessions, w } = await start(dialect, {
        turns: [
          [text("Primed.", { input: 1000, output: 100 })],
          [text("Arm one.", { input: 200, output: 10 })],
          [text("Arm two.", { input: 300, output: 30 })],
        ],
      });
      await expect(client.clone()).rejects.toThrow(/refused clone: Entry [0-9a-f]{8} not found/);
      const prime = await client.prompt("Prime");
      const primeFile = client.sessionFile ?? "";
      expect(prime.own.tokens).toEqual({ input: 1000, output: 100, cache_read: 0, cache_write: 0 });

      const arms = [];
      for (const k of [1, 2]) {
        if (k > 1) {
          const back = await client.switchSession(primeFile);
          expect(back.sessionId).toBe(id);
          expect(back.messageCount).toBe(2);
          // Back on the prime: its own usage is the prime's alone.
          expect((await client.usage()).own.tokens).toEqual(prime.own.tokens);
        }
        const clone = await client.clone();
        expect(clone.parentId).toBe(id);
        expect(clone.parentFile).toBe(primeFile);
        expect(clone.atClone.tokens).toEqual(prime.own.tokens);
        expect(header(clone.sessionFile ?? "")).toMatchObject({ id: clone.sessionId, parentSession: primeFile, cwd: w.proj });
        const arm = await client.prompt(`Arm ${k}`);
        expect(arm.verdict).toMatchObject({ status: "completed", session_id: clone.sessionId, text: k === 1 ? "Arm one." : "Arm two." });
        arms.push({ clone, arm, usage: await client.usage() });
      }
      const [one, two] = arms;
      expect(one?.arm.own.tokens).toEqual({ input: 200, output: 10, cache_read: 0, cache_write: 0 });
      expect(two?.arm.own.tokens).toEqual({ input: 300, output: 30, cache_read: 0, cache_write: 0 });
      // A clone's own = now minus at-clone, though pi's stats count the copied prime.
      expect(one?.usage.own).toEqual(one!.arm.own);
      expect(two?.usage.own).toEqual(two!.arm.own);
      expect(two?.usage.total.tokens).toEqual({ input: 1300, output: 130, cache_read: 0, cache_write: 0 });
      expect(one?.arm.session).toEqual(one!.arm.own);
      expect(one?.arm.own.costMicroUsd).toBe(450); // 200 × 1.5 + 10 × 15 µUSD
      expect(new Set([id, one?.clone.sessionId, two?.clone.sessionId]).size).toBe(3);
      expect(sessions.map((s) => `${s.reason}:${s.parentId ?? "-"}`)).toEqual(["start:-", "clone:" + id, "switch:-", "clone:" + id]);
      await client.close();
    });

    test("set_model: ok (later turns judged against it), unknown rejected; set_thinking", async () => {
      const { client } = await start(dialect, { models: ["standin/second-model"], turns: [[text("From the second model.")]] });
      const model = await client.setModel("standin", "second-model");
      expect(model).toMatchObject({ provider: "standin", id: "second-model" });
      await expect(client.setModel("standin", "nope")).rejects.toThrow("pi (rpc) refused set_model: Model not found: standin/nope");
      const turn = await client.prompt("Who are you?");
      expect(turn.verdict).toMatchObject({ status: "completed", summary: { model: "standin/second-model" } });
      await client.setThinking("high");
      expect((await client.state()).thinkingLevel).toBe("high");
      await client.setThinking("bogus");
      expect((await client.state()).thinkingLevel).toBe("off");
      await client.close();
    });

    test("abort during a slow turn: an aborted verdict; the next prompt works", async () => {
      const { client, progress } = await start(dialect, {
        turns: [[text("This answer is very slow to come.")].map((s) => ({ ...s, chunkDelayMs: 20_000 })), [text("Still here.")]],
      });
      const started = performance.now();
      const pending = client.prompt("Slow, please");
      await until(() => progress.some((e) => e.kind === "assistant_text"));
      await client.abort();
      const turn = await pending;
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(turn.verdict).toMatchObject({
        status: "aborted",
        ok: false,
        text: null,
        stop_reason: "aborted",
        failure: { kind: "stopped", cause: "interrupt", message: "aborted: the turn was aborted on request" },
      });
      expect(turn.exitCode).toBe(130);
      const next = await client.prompt("Are you there?");
      expect(next.verdict).toMatchObject({ status: "completed", text: "Still here." });
      await client.close();
    });

    test("retry then success, retry then final failure, 400 not retried: each turn ends at its true end", async () => {
      const { client } = await start(dialect, {
        turns: [
          [{ error: { status: 429 } }, text("Recovered.")],
          [{ error: { status: 500, times: 4 } }],
          [{ error: { status: 400, message: "400 standin bad request" } }],
          [text("Fine.")],
        ],
      });
      const ok = await client.prompt("one");
      expect(ok.verdict).toMatchObject({
        status: "completed",
        text: "Recovered.",
        summary: { provider_retries: 1, retry_outcome: "success", agent_ends: 2 },
      });
      const failed = await client.prompt("two");
      // Ended after auto_retry_end{success:false}, which follows the last agent_end.
      expect(failed.verdict).toMatchObject({ status: "failed", summary: { provider_retries: 3, retry_outcome: "failure", agent_ends: 4 } });
      expect(failed.verdict.failure?.message).toContain("pi: stopped on error: 500 standin error 500");
      const bad = await client.prompt("three");
      expect(bad.verdict).toMatchObject({ status: "failed", summary: { provider_retries: 0, agent_ends: 1 } });
      expect(bad.verdict.summary.retry_outcome).toBeUndefined();
      expect((await client.prompt("four")).verdict.text).toBe("Fine.");
      await client.close();
    });

    test("abort during a retry delay: auto_retry_end{false} with no agent_end after it still ends the turn", async () => {
      const { client, progress } = await start(dialect, {
        retrySleepMs: 30_000,
        turns: [[{ error: { status: 500, times: 2 } }], [text("After.")]],
      });
      const pending = client.prompt("retry slowly");
      await until(() => progress.some((e) => e.kind === "provider_retry"));
      const asked = performance.now();
      await client.abort();
      const turn = await pending;
      expect(performance.now() - asked).toBeLessThan(2_000);
      expect(turn.verdict).toMatchObject({
        status: "aborted",
        stop_reason: "error",
        summary: { provider_retries: 1, retry_outcome: "failure", agent_ends: 1, stopped_by: "interrupt" },
      });
      expect((await client.prompt("again")).verdict.text).toBe("After.");
      await client.close();
    });

    test("retries disabled in settings.json: a retryable 500 ends the turn at its only agent_end", async () => {
      const w = world(dialect, { turns: [[{ error: { status: 503 } }]] });
      writeFileSync(join(w.agent, "settings.json"), JSON.stringify({ retry: { enabled: false } }));
      const { client } = await start(dialect, {}, {}, w);
      const turn = await client.prompt("x");
      expect(turn.verdict).toMatchObject({ status: "failed", summary: { provider_retries: 0, agent_ends: 1 } });
      await client.close();
    });

    test("a response without an id fails the command in flight; the next one works", async () => {
      const { client } = await start(dialect, { turns: [[text("ok")]] });
      const error = await client.request({ type: "no_such_command" } as unknown as RpcCommand).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PiRpcError);
      expect((error as PiRpcError).code).toBe("command_failed");
      expect((error as PiRpcError).message).toBe("pi (rpc) refused no_such_command: Unknown command: no_such_command");
      expect((error as PiRpcError).details.response).toEqual({
        type: "response",
        command: "no_such_command",
        success: false,
        error: "Unknown command: no_such_command",
      });
      expect((await client.state()).sessionId).toBe(client.sessionId);
      await client.close();
    });

    test("a crash mid-turn fails the pending prompt at once, with the stderr tail", async () => {
      const { client } = await start(dialect, {
        turns: [[text("Starting."), { stderr: "\u001b[31mError: something broke\u001b[0m\n" }, { exit: 1 }]],
      });
      const started = performance.now();
      const error = (await client.prompt("go").catch((e: unknown) => e)) as PiRpcError;
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(error).toBeInstanceOf(PiRpcError);
      expect(error.code).toBe("exited");
      expect(error.message).toStartWith("pi (rpc) exited with code 1 during a turn: ");
      expect(error.message).toEndWith("Error: something broke");
      expect(error.details.stderrTail).toContain("Error: something broke");
      expect(error.details.verdict).toMatchObject({ status: "failed", ok: false });
      expect(error.details.verdict?.failure?.message).toContain("exit code 1");
      await expect(client.state()).rejects.toThrow("exited with code 1");
      await client.close();
    });

    test("a hang: the stall timer aborts the turn (stalled); a turn timeout gives timeout; both leave pi usable", async () => {
      const { client } = await start(
        dialect,
        { turns: [[text("Thinking."), { hang: true }], [text("Awake.")], [{ sleep: 60_000 }], [text("Awake again.")]] },
        { stallMs: 300, turnTimeoutMs: 30_000 },
      );
      const stalled = await client.prompt("hang");
      expect(stalled.verdict).toMatchObject({
        status: "stalled",
        ok: false,
        stop_reason: "aborted",
        failure: {
          kind: "stopped",
          cause: "stall",
          message: "stalled: no tool call open and no output from the agent for 0.3 s; the turn was aborted",
        },
      });
      expect(stalled.exitCode).toBe(4);
      expect((await client.prompt("wake")).verdict.text).toBe("Awake.");
      await client.close();

      const timed = await start(dialect, { turns: [[{ sleep: 60_000 }], [text("Awake again.")]] }, { turnTimeoutMs: 400 });
      const timeout = await timed.client.prompt("sleep");
      expect(timeout.verdict).toMatchObject({
        status: "timeout",
        failure: { kind: "stopped", cause: "timeout", message: "timed out after 0.4 s; the turn was aborted" },
      });
      expect((await timed.client.prompt("wake")).verdict.text).toBe("Awake again.");
      await timed.client.close();
    });

    test("a hang that ignores abort: the tree is killed after the command timeout, the turn judged stalled", async () => {
      const { client } = await start(
        dialect,
        { turns: [[text("Stuck."), { hang: true, ignoreAbort: true }]] },
        { stallMs: 200, commandTimeoutMs: 500, closeWaitMs: 200, graceMs: 200 },
      );
      const turn = await client.prompt("hang");
      expect(turn.verdict.status).toBe("stalled");
      expect(turn.verdict.failure?.message).toContain("its process tree was killed");
      expect(await waitGone(client.pid, 3_000)).toBe(true);
      await expect(client.state()).rejects.toThrow(/closed/);
    });

    test("close kills the tree: pi and its grandchild are gone; the turn in flight fails as closed", async () => {
      const w = world(dialect, {});
      const pidFile = join(w.root, "grandchild.pid");
      w.env.AGENTPORT_FAKE_SCENARIO = JSON.stringify({
        turns: [[text("Working."), { grandchild: pidFile }, { hang: true, ignoreTerm: true, ignoreAbort: true }]],
      });
      const { client } = await start(dialect, {}, { graceMs: 300, closeWaitMs: 300 }, w);
      const pending = client.prompt("work").catch((e: unknown) => e);
      await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").length > 0);
      const grandchild = Number(readFileSync(pidFile, "utf8"));
      expect(isRunning(grandchild)).toBe(true);
      await client.close();
      const error = (await pending) as PiRpcError;
      expect(error.code).toBe("closed");
      expect(await waitGone(client.pid, 3_000)).toBe(true);
      expect(await waitGone(grandchild, 3_000)).toBe(true);
      await client.close(); // idempotent
    });

    test("close ends a grandchild that made a session of its own (the whole tree, not only the group)", async () => {
      const w = world(dialect, {});
      const pidFile = join(w.root, "detached.pid");
      // What a bash tool leaves behind: a process in a session of its own, outside pi's group.
      const shell = `setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $! > ${pidFile}`;
      w.env.AGENTPORT_FAKE_SCENARIO = JSON.stringify({
        turns: [[text("Working."), { shell }, { hang: true, ignoreTerm: true, ignoreAbort: true }]],
      });
      const { client } = await start(dialect, {}, { graceMs: 300, closeWaitMs: 300 }, w);
      const pending = client.prompt("work").catch((e: unknown) => e);
      await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim().length > 0);
      const detached = Number(readFileSync(pidFile, "utf8"));
      expect(isRunning(detached)).toBe(true);
      await client.close();
      await pending;
      expect(await waitGone(client.pid, 3_000)).toBe(true);
      expect(await waitGone(detached, 3_000)).toBe(true);
    });

    test("a scripted writeFile really writes into pi's cwd; --fork runs an arm in another folder", async () => {
      const { client, w } = await start(dialect, {
        turns: [[{ writeFile: { path: "src/arm.txt", content: "arm in the prime folder\n" } }, text("Wrote it.")]],
      });
      const turn = await client.prompt("write");
      expect(turn.verdict).toMatchObject({ status: "completed", text: "Wrote it.", summary: { tool_calls: 1, tool_errors: 0 } });
      expect(readFileSync(join(w.proj, "src", "arm.txt"), "utf8")).toBe("arm in the prime folder\n");
      const primeFile = client.sessionFile ?? "";
      await client.close();

      const elsewhere = join(w.root, "worktree");
      mkdirSync(elsewhere);
      w.env.AGENTPORT_FAKE_SCENARIO = JSON.stringify({
        turns: [[{ writeFile: { path: "arm.txt", content: "arm two\n" } }, text("Forked.")]],
      });
      const forked = await start(dialect, {}, { fork: primeFile, cwd: elsewhere }, w);
      expect(forked.sessions[0]).toMatchObject({ reason: "fork", parentFile: primeFile });
      expect(forked.client.sessionId).not.toBe(client.sessionId);
      expect(header(forked.client.sessionFile ?? "")).toMatchObject({ cwd: elsewhere, parentSession: primeFile });
      const arm = await forked.client.prompt("arm");
      expect(arm.verdict.text).toBe("Forked.");
      // The fork starts with the prime's history: its own usage is the arm alone.
      expect(arm.session).toEqual(arm.own);
      expect(readFileSync(join(elsewhere, "arm.txt"), "utf8")).toBe("arm two\n");
      expect(existsSync(join(w.proj, "arm.txt"))).toBe(false);
      await forked.client.close();
    });

    test("a prompt while a turn runs is refused by the client; await using closes the client", async () => {
      let pid = 0;
      {
        await using started = await start(dialect, {
          turns: [[text("Slow enough to overlap.", undefined)].map((s) => ({ ...s, chunkDelayMs: 300 }))],
        }).then((s) => s.client);
        pid = started.pid;
        const first = started.prompt("one");
        await expect(started.prompt("two")).rejects.toThrow("a turn is already running");
        expect((await first).verdict.status).toBe("completed");
      }
      expect(await waitGone(pid, 3_000)).toBe(true);
    });
  });
}

/** The fake pi in RPC mode, spoken to raw: JSON lines in, every stdout line kept. */
function raw(dialect: Dialect, scenario: Json) {
  const w = world(dialect, scenario);
  const proc = Bun.spawn([fake, "--mode", "rpc", "--session-dir", w.sessions, "--model", "standin/standin-model"], {
    cwd: w.proj,
    env: w.env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const lines: Json[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        lines.push(JSON.parse(buf.slice(0, nl)) as Json);
        buf = buf.slice(nl + 1);
      }
    }
  })();
  const send = (line: Json | string) => {
    proc.stdin.write(`${typeof line === "string" ? line : JSON.stringify(line)}\n`);
    proc.stdin.flush();
  };
  const names = () =>
    lines
      .map((l) =>
        l.type === "response"
          ? `response(${l.command},${l.success})`
          : l.type === "message_end"
            ? `message_end(${l.message.role}:${l.message.stopReason ?? "-"})`
            : String(l.type),
      )
      .filter((n) => n !== "message_update");
  return { proc, lines, send, names };
}

describe("the fake pi's RPC protocol (ground truth §4-5)", () => {
  test("no header; id echoed; unknown command and parse error answered without id; prompt's response before agent_start", async () => {
    const { proc, lines, send, names } = raw("0.73.1", { turns: [[text("Hi.")]] });
    send({ id: "s1", type: "get_state" });
    await until(() => lines.length === 1);
    expect(lines[0]).toMatchObject({
      id: "s1",
      type: "response",
      command: "get_state",
      success: true,
      data: { thinkingLevel: "off", isStreaming: false, messageCount: 0 },
    });
    expect(Object.keys(lines[0]?.data ?? {})).toEqual([
      "model",
      "thinkingLevel",
      "isStreaming",
      "isCompacting",
      "steeringMode",
      "followUpMode",
      "sessionFile",
      "sessionId",
      "autoCompactionEnabled",
      "messageCount",
      "pendingMessageCount",
    ]);
    send({ id: "u1", type: "no_such_command" });
    await until(() => lines.length === 2);
    expect(lines[1]).toEqual({ type: "response", command: "no_such_command", success: false, error: "Unknown command: no_such_command" });
    send("this is not json");
    await until(() => lines.length === 3);
    expect(lines[2]).toMatchObject({ type: "response", command: "parse", success: false });
    expect(lines[2]?.id).toBeUndefined();
    expect(String(lines[2]?.error)).toStartWith("Failed to parse command: ");
    send({ id: "p1", type: "prompt", message: "Hello" });
    await until(() => lines.some((l) => l.type === "agent_end"));
    expect(names().slice(3)).toEqual([
      "response(prompt,true)",
      "agent_start",
      "turn_start",
      "message_start",
      "message_end(user:-)",
      "message_start",
      "message_end(assistant:stop)",
      "turn_end",
      "agent_end",
    ]);
    const started = performance.now();
    proc.stdin.end();
    expect(await proc.exited).toBe(0);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  test("a pending dialog blocks the turn; abort does not release it; the abort answer comes after agent_end (0.85: after agent_settled)", async () => {
    for (const dialect of ["0.73.1", "0.85"] as const) {
      const { proc, lines, send, names } = raw(dialect, {
        turns: [
          [
            { confirm: { title: "Run it?" } },
            { tool: { name: "bash", args: { command: "echo abort-me" }, result: "abort-me\n" } },
            text("Done."),
          ],
        ],
      });
      send({ id: "p1", type: "prompt", message: "Go" });
      await until(() => lines.some((l) => l.type === "extension_ui_request"));
      const request = lines.find((l) => l.type === "extension_ui_request") as Json;
      expect(request).toMatchObject({ method: "confirm", title: "Run it?", message: "" });
      send({ id: "a1", type: "abort" });
      // Other commands are still answered meanwhile.
      send({ id: "s1", type: "get_state" });
      await until(() => lines.some((l) => l.id === "s1"));
      expect(lines.find((l) => l.id === "s1")?.data.isStreaming).toBe(true);
      await Bun.sleep(300);
      expect(lines.some((l) => l.id === "a1" || l.type === "agent_end")).toBe(false);
      send({ type: "extension_ui_response", id: request.id, confirmed: true });
      await until(() => lines.some((l) => l.id === "a1"));
      const tail = names().slice(names().indexOf("response(get_state,true)") + 1);
      expect(tail).toEqual([
        "tool_execution_update",
        "tool_execution_update",
        "tool_execution_end",
        "message_start",
        "message_end(toolResult:-)",
        "turn_end",
        "turn_start",
        "message_start",
        "message_end(assistant:aborted)",
        "turn_end",
        "agent_end",
        ...(dialect === "0.85" ? ["agent_settled"] : []),
        "response(abort,true)",
      ]);
      // Confirmed after the abort: the command started and was cut.
      expect(lines.find((l) => l.type === "tool_execution_end")).toMatchObject({
        isError: true,
        result: { content: [{ text: "abort-me\n\n\nCommand aborted" }] },
      });
      proc.stdin.end();
      await proc.exited;
    }
  });
});

describe("the turn-end rule (ground truth §3): every order", () => {
  // Events by name; `B` is the barrier's response (the one asked for last).
  function run(order: string[], settles = false): { ended: boolean; at: number } {
    const d = new TurnEndDetector({ settles });
    let generation = -1;
    for (const [i, step] of order.entries()) {
      if (step === "B") {
        if (d.barrier(generation)) return { ended: true, at: i };
        continue;
      }
      const [type, arg] = step.split(":");
      const event: Json = { type };
      if (type === "auto_retry_end") event.success = arg === "ok";
      if (type === "compaction_end") event.willRetry = arg === "retry";
      const signal = d.event(event);
      if (signal.kind === "end") return { ended: true, at: i };
      if (signal.kind === "barrier") generation = signal.generation;
    }
    return { ended: false, at: -1 };
  }

  test("success: agent_end, then the barrier's answer ends it", () => {
    expect(run(["agent_start", "turn_end", "agent_end", "B"])).toEqual({ ended: true, at: 3 });
  });

  test("retry then success (d4): auto_retry_start before the barrier keeps it open; auto_retry_end{true} comes before the good agent_end", () => {
    const order = ["agent_start", "agent_end", "auto_retry_start", "B", "agent_start", "auto_retry_end:ok", "turn_end", "agent_end", "B"];
    expect(run(order)).toEqual({ ended: true, at: 8 });
  });

  test("final failure (c1): auto_retry_end{false} after the last agent_end", () => {
    const order = [
      "agent_start",
      "agent_end",
      "auto_retry_start",
      "B",
      "agent_start",
      "agent_end",
      "auto_retry_start",
      "agent_start",
      "agent_end",
      "auto_retry_end:fail",
      "B",
    ];
    expect(run(order)).toEqual({ ended: true, at: 10 });
    // The stale barrier of the last agent_end, answered after auto_retry_end, does not end it early either: only the newest counts.
    const d = new TurnEndDetector();
    d.event({ type: "agent_start" });
    const first = d.event({ type: "agent_end" });
    const second = d.event({ type: "auto_retry_end", success: false });
    expect(first.kind === "barrier" && d.barrier(first.generation)).toBe(false);
    expect(second.kind === "barrier" && d.barrier(second.generation)).toBe(true);
  });

  test("a 400 is not retried: agent_end, nothing, the barrier ends it", () => {
    expect(run(["agent_start", "agent_end", "B"]).ended).toBe(true);
  });

  test("a barrier answered while a retry's run is open does not end it", () => {
    expect(run(["agent_start", "agent_end", "auto_retry_start", "agent_start", "B"]).ended).toBe(false);
  });

  test("compaction after agent_end: wait for compaction_end; willRetry waits for the next agent_end", () => {
    expect(run(["agent_start", "agent_end", "compaction_start", "B", "compaction_end:no", "B"])).toEqual({ ended: true, at: 5 });
    expect(run(["agent_start", "agent_end", "compaction_start", "B", "compaction_end:retry", "B"]).ended).toBe(false);
    expect(run(["agent_start", "agent_end", "compaction_start", "compaction_end:retry", "agent_start", "agent_end", "B"]).ended).toBe(true);
    // A compaction before the prompt's run ends nothing.
    expect(run(["compaction_start", "compaction_end:no", "B"]).ended).toBe(false);
  });

  test("an abort that cancels a retry delay: auto_retry_end{false} alone asks for the barrier", () => {
    expect(run(["agent_start", "agent_end", "auto_retry_start", "B", "auto_retry_end:fail", "B"])).toEqual({ ended: true, at: 5 });
  });

  test("agent_settled ends it at once; a settled dialect ignores agent_end", () => {
    expect(run(["agent_start", "agent_end", "agent_settled"])).toEqual({ ended: true, at: 2 });
    expect(run(["agent_start", "agent_end", "B"], true).ended).toBe(false);
    expect(run(["agent_start", "agent_end", "auto_retry_start", "agent_start", "agent_end", "agent_settled"], true)).toEqual({
      ended: true,
      at: 5,
    });
    expect(dialectSettles("0.73.1")).toBe(false);
    expect(dialectSettles("0.85.0")).toBe(true);
    expect(dialectSettles("1.2.0")).toBe(true);
  });
});

describe("rpc client: loop and budget supervision per turn", () => {
  const read = { tool: { name: "read", args: { path: "same.txt" }, result: "same content" } };
  const paced = (n: number) => Array.from({ length: n }, () => [read, { sleep: 30 }]).flat();

  test("the same tool call K times aborts the turn: looping, the tool named; the next turn works", async () => {
    const { client } = await start(
      "0.73.1",
      { turns: [[...paced(6), { sleep: 3_000 }, text("never")], [text("Next.")]] },
      { loopRepeat: 3 },
    );
    const turn = await client.prompt("Loop please");
    expect(turn.verdict.status).toBe("looping");
    expect(turn.verdict.failure?.message).toBe("looping: the same read call 3 times in a row; the turn was aborted");
    expect(turn.verdict.summary).toMatchObject({ stopped_by: "loop", loop_tool: "read", loop_count: 3 });
    expect(turn.exitCode).toBe(4);
    const next = await client.prompt("Go on");
    expect(next.verdict.ok).toBe(true);
    await client.close();
  });

  test("over the token budget in enforce mode aborts the turn: over_budget with the weighted figure", async () => {
    const heavy = (t: string) => ({ text: t, usage: { input: 5_000, output: 10 } });
    const scenario = {
      turns: [
        [
          { tool: { name: "read", args: { path: "a" }, result: "a" }, usage: { input: 5_000, output: 10 } },
          { sleep: 100 },
          heavy("one"),
          { sleep: 3_000 },
          heavy("never"),
        ],
      ],
    };
    const { client } = await start("0.73.1", scenario, {
      budget: { maxTokens: 4_000, mode: "enforce", cacheReadWeight: 0.1, graceMs: 0 },
      loopRepeat: null,
    });
    const turn = await client.prompt("Spend");
    expect(turn.verdict.status).toBe("over_budget");
    expect(turn.verdict.failure?.message).toContain("weighted tokens of 4000");
    expect(turn.verdict.summary.budget_weighted_tokens).toBeGreaterThan(4_000);
    await client.close();
  });
});
