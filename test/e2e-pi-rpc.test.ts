// The RPC client driving the real pi 0.73.1 (the devDependency) in `--mode rpc`
// against the loopback OpenAI stand-in: no key, no network, zero tokens.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { newSessionFile } from "../src/agents/pi/run.ts";
import { parseCapabilities, type PiCapabilities } from "../src/core/pi/capabilities.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import { VerdictSchema } from "../src/core/verdict.ts";
import { waitGone } from "../src/io/proc.ts";
import { PiRpcClient, PiRpcError, type PiRpcStartOptions, type RpcSession } from "../src/rpc/client.ts";
import { ROOT } from "./helpers.ts";
import { piEnv, STANDIN_COST, startOpenAIStandin, type Standin } from "./standins/openai.ts";
import type { Reply, Script } from "./standins/util.ts";
import { removeTempDirs, tempDir } from "./standins/util.ts";

type Json = Record<string, any>;

const PI = join(ROOT, "node_modules", ".bin", "pi");
const standins: Standin[] = [];
const clients: PiRpcClient[] = [];
let caps: PiCapabilities;

beforeAll(async () => {
  const run = async (flag: string) => {
    const proc = Bun.spawn([PI, flag], {
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", PI_OFFLINE: "1", HOME: tempDir("agentport-e2e-rpc-home-") },
    });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    await proc.exited;
    return `${out}\n${err}`;
  };
  const [version, help] = await Promise.all([run("--version"), run("--help")]);
  caps = parseCapabilities(version, help);
});

afterAll(async () => {
  for (const c of clients) await c.close();
  for (const s of standins) await s.stop();
  removeTempDirs();
});

interface World {
  dir: string;
  project: string;
  sessions: string;
  env: Record<string, string>;
  standin: Standin;
}

/** A stand-in, pi's agent dir (models.json with a second model), a project folder. */
function world(script: Script): World {
  const dir = tempDir("agentport-e2e-rpc-");
  const standin = startOpenAIStandin(script);
  standins.push(standin);
  const project = join(dir, "project");
  mkdirSync(project, { recursive: true });
  const env = piEnv(dir, standin.url);
  const modelsFile = join(env.PI_CODING_AGENT_DIR ?? "", "models.json");
  const models = JSON.parse(readFileSync(modelsFile, "utf8"));
  models.providers.standin.models.push({
    id: "standin-model-2",
    name: "Stand-in model two",
    reasoning: false,
    input: ["text"],
    cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 64000,
    maxTokens: 2048,
  });
  writeFileSync(modelsFile, JSON.stringify(models, null, 2));
  return { dir, project, sessions: join(dir, "sessions"), env, standin };
}

async function start(w: World, extra: Partial<PiRpcStartOptions> = {}) {
  const id = crypto.randomUUID();
  const sessions: RpcSession[] = [];
  const progress: ProgressEvent[] = [];
  const client = await PiRpcClient.start({
    bin: PI,
    caps,
    cwd: w.project,
    env: w.env,
    sessionDir: w.sessions,
    // 0.73.1 has no --session-id: agentport names the file, and pi takes the id from its header.
    sessionFile: newSessionFile(w.sessions, id, w.project),
    sessionId: id,
    model: "standin/standin-model",
    gateway: "",
    direct: true,
    extensions: [],
    stderrFile: join(w.dir, `pi-${id}.stderr.log`),
    maxLineBytes: 8 * 1024 * 1024,
    commandTimeoutMs: 20_000,
    turnTimeoutMs: 40_000,
    onSession: (s) => sessions.push(s),
    onProgress: (e) => progress.push(e),
    ...extra,
  });
  clients.push(client);
  return { client, id, sessions, progress };
}

/** The last user message's text of a chat-completions request. */
function lastUser(req: Json): string {
  const users = (req.messages as Json[]).filter((m) => m.role === "user");
  const content = users.at(-1)?.content;
  return typeof content === "string" ? content : (content as Json[]).map((c) => c.text ?? "").join("");
}

async function until(check: () => boolean, ms = 15_000): Promise<void> {
  const end = performance.now() + ms;
  while (!check()) {
    if (performance.now() > end) throw new Error("condition not met in time");
    await Bun.sleep(10);
  }
}

const header = (file: string): Json => JSON.parse(readFileSync(file, "utf8").split("\n")[0] ?? "{}");
const costOf = (input: number, output: number) => input * STANDIN_COST.input + output * STANDIN_COST.output; // µUSD

describe("rpc client with the real pi 0.73.1", () => {
  test("prime, two clones from the same prime with their own stats, switch back", async () => {
    const usage: Record<string, { input: number; output: number }> = {
      Prime: { input: 1000, output: 10 },
      "Arm one": { input: 1200, output: 20 },
      "Arm two": { input: 1300, output: 30 },
    };
    const w = world((req): Reply => {
      const asked = lastUser(req);
      return { text: `${asked} done.`, usage: usage[asked] ?? { input: 1, output: 1 } };
    });
    const { client, id, sessions } = await start(w);
    expect(caps.version).toBe("0.73.1");
    expect(client.sessionId).toBe(id);

    const prime = await client.prompt("Prime");
    VerdictSchema.parse(prime.verdict);
    expect(prime.verdict).toMatchObject({ status: "completed", ok: true, text: "Prime done.", session_id: id, stop_reason: "stop" });
    expect(prime.verdict.tokens).toEqual({ input: 1000, output: 10, cache_read: 0, cache_write: 0 });
    expect(prime.verdict.cost_micro_usd).toBe(costOf(1000, 10));
    expect(prime.own).toEqual({ tokens: prime.verdict.tokens, costMicroUsd: costOf(1000, 10) });
    const primeFile = client.sessionFile ?? "";
    expect(header(primeFile).id).toBe(id);

    const arms = [];
    for (const name of ["Arm one", "Arm two"]) {
      if (arms.length > 0) {
        const back = await client.switchSession(primeFile);
        expect(back).toMatchObject({ sessionId: id, sessionFile: primeFile, messageCount: 2 });
      }
      const clone = await client.clone();
      expect(clone.parentId).toBe(id);
      expect(clone.sessionId).not.toBe(id);
      expect(clone.atClone.tokens).toEqual(prime.own.tokens);
      // The clone file: same dir, parentSession, the prime's cwd.
      expect(header(clone.sessionFile ?? "")).toMatchObject({ id: clone.sessionId, parentSession: primeFile, cwd: w.project });
      const arm = await client.prompt(name);
      expect(arm.verdict).toMatchObject({ status: "completed", text: `${name} done.`, session_id: clone.sessionId });
      // The arm's request carried the prime's history.
      expect(JSON.stringify(w.standin.requests.at(-1)?.messages)).toContain("Prime done.");
      const u = usage[name]!;
      expect(arm.own).toEqual({
        tokens: { input: u.input, output: u.output, cache_read: 0, cache_write: 0 },
        costMicroUsd: costOf(u.input, u.output),
      });
      const sessionUsage = await client.usage();
      expect(sessionUsage.own).toEqual(arm.own);
      // pi's own stats count the cloned prime too.
      expect(sessionUsage.total.tokens?.input).toBe(1000 + u.input);
      arms.push(clone.sessionId);
    }
    expect(new Set([id, ...arms]).size).toBe(3);
    expect(sessions.map((s) => s.reason)).toEqual(["start", "clone", "switch", "clone"]);
    const back = await client.switchSession(primeFile);
    expect(back.sessionId).toBe(id);
    expect((await client.usage()).own.tokens).toEqual(prime.own.tokens);
    await client.close();
  }, 60_000);

  test("set_model to a second model: later turns are judged against it; an unknown model is refused", async () => {
    const w = world([{ text: "From the first." }, { text: "From the second." }]);
    const { client } = await start(w);
    expect((await client.prompt("one")).verdict.summary.model).toBe("standin/standin-model");
    await expect(client.setModel("standin", "nope")).rejects.toThrow("pi (rpc) refused set_model: Model not found: standin/nope");
    expect(await client.setModel("standin", "standin-model-2")).toMatchObject({ provider: "standin", id: "standin-model-2" });
    const second = await client.prompt("two");
    expect(second.verdict).toMatchObject({ status: "completed", text: "From the second.", summary: { model: "standin/standin-model-2" } });
    expect(w.standin.requests.at(-1)?.model).toBe("standin-model-2");
    await client.setThinking("high");
    // A non-reasoning model keeps "off" (§4).
    expect((await client.state()).thinkingLevel).toBe("off");
    await client.close();
  }, 60_000);

  test("abort during a slow reply: an aborted verdict, then the next prompt works", async () => {
    const w = world([
      { text: "This is a slow answer that takes a long while to stream.", chunkDelayMs: 1_500 },
      { text: "Answer after abort." },
    ]);
    const { client, progress } = await start(w);
    const pending = client.prompt("Slow, please");
    await until(() => progress.some((e) => e.kind === "assistant_text"));
    const asked = performance.now();
    await client.abort();
    const turn = await pending;
    expect(performance.now() - asked).toBeLessThan(3_000);
    expect(turn.verdict).toMatchObject({
      status: "aborted",
      ok: false,
      stop_reason: "aborted",
      failure: { kind: "stopped", cause: "interrupt", message: "aborted: the turn was aborted on request" },
    });
    const next = await client.prompt("Are you still there?");
    expect(next.verdict).toMatchObject({ status: "completed", text: "Answer after abort." });
    await client.close();
  }, 60_000);

  test("an extension's confirm dialog in a tool_call hook: cancelled at once, recorded, the turn finishes", async () => {
    const w = world([{ toolCall: { name: "bash", arguments: { command: "echo hi > touched.txt" } } }, { text: "Blocked, so I stop." }]);
    const extension = join(w.dir, "confirm-gate.ts");
    writeFileSync(
      extension,
      `export default function (pi: any) {
  pi.on("tool_call", async (event: any, ctx: any) => {
    if (event.toolName !== "bash") return undefined;
    const ok = await ctx.ui.confirm("Run bash?", "Allow: " + event.input.command);
    return ok ? undefined : { block: true, reason: "Blocked by the test extension" };
  });
}
`,
    );
    const { client } = await start(w, { extensions: [extension] });
    const turn = await client.prompt("Touch a file");
    expect(turn.verdict).toMatchObject({
      status: "completed",
      ok: true,
      text: "Blocked, so I stop.",
      refused: [{ kind: "dialog", subject: "Run bash?" }],
    });
    expect(turn.verdict.summary).toMatchObject({ tool_calls: 1, tool_errors: 1, dialogs_refused: 1 });
    expect(existsSync(join(w.project, "touched.txt"))).toBe(false);
    expect(JSON.stringify(w.standin.requests[1]?.messages)).toContain("Blocked by the test extension");
    await client.close();
  }, 60_000);

  test("retries: 429 then ok, 500 until the last attempt, 400 not retried; each turn ends at its true end", async () => {
    // piEnv: 2 pi-level retries 50 ms and 100 ms apart, the SDK's own retries off.
    const w = world([
      { status: 429 },
      { text: "Recovered." },
      { status: 500 },
      { status: 500 },
      { status: 500 },
      { status: 400, body: "bad request" },
      { text: "Fine." },
    ]);
    const { client } = await start(w);
    const ok = await client.prompt("one");
    expect(ok.verdict).toMatchObject({
      status: "completed",
      text: "Recovered.",
      summary: { provider_retries: 1, retry_outcome: "success", agent_ends: 2 },
    });
    const failed = await client.prompt("two");
    expect(failed.verdict).toMatchObject({ status: "failed", summary: { provider_retries: 2, retry_outcome: "failure", agent_ends: 3 } });
    expect(failed.verdict.failure?.message).toContain("pi: stopped on error: 500");
    const bad = await client.prompt("three");
    expect(bad.verdict).toMatchObject({ status: "failed", summary: { provider_retries: 0, agent_ends: 1 } });
    expect(bad.verdict.failure?.message).toContain("400");
    expect((await client.prompt("four")).verdict.text).toBe("Fine.");
    expect(w.standin.requests.length).toBe(7);
    await client.close();
  }, 60_000);

  test("abort during a retry delay: pi cancels the retry (auto_retry_end{false}, no agent_end after it); the turn still ends", async () => {
    const w = world([{ status: 503 }, { text: "After the cancelled retry." }]);
    const settingsFile = join(w.env.PI_CODING_AGENT_DIR ?? "", "settings.json");
    const settings = JSON.parse(readFileSync(settingsFile, "utf8"));
    settings.retry.baseDelayMs = 30_000;
    writeFileSync(settingsFile, JSON.stringify(settings));
    const { client, progress } = await start(w);
    const pending = client.prompt("retry slowly");
    await until(() => progress.some((e) => e.kind === "provider_retry"));
    const asked = performance.now();
    await client.abort();
    const turn = await pending;
    expect(performance.now() - asked).toBeLessThan(3_000);
    expect(turn.verdict).toMatchObject({ status: "aborted", summary: { provider_retries: 1, retry_outcome: "failure", agent_ends: 1 } });
    expect((await client.prompt("again")).verdict.text).toBe("After the cancelled retry.");
    expect(w.standin.requests.length).toBe(2);
    await client.close();
  }, 60_000);

  test("closing stdin mid-turn: pi exits at once, the turn is lost and fails as closed, nothing is left", async () => {
    const w = world([{ text: "A very slow answer that will never finish streaming.", chunkDelayMs: 1_500 }]);
    const { client, progress } = await start(w, { closeWaitMs: 5_000 });
    const pending = client.prompt("Slow").catch((e: unknown) => e);
    await until(() => progress.some((e) => e.kind === "assistant_text"));
    const closing = performance.now();
    await client.close();
    // pi exited on its own after stdin closed: no TERM was needed.
    expect(performance.now() - closing).toBeLessThan(2_000);
    const error = (await pending) as PiRpcError;
    expect(error).toBeInstanceOf(PiRpcError);
    expect(error.code).toBe("closed");
    expect(error.details.exitCode).toBe(0);
    expect(await waitGone(client.pid, 2_000)).toBe(true);
  }, 60_000);
});
