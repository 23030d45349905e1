// The `opencode serve` client (src/io/opencode-server.ts) against the real
// opencode 1.18.33 and the chat-completions stand-in, offline: the listening
// line, the password (a request without it, or with a wrong one, is refused),
// sessions created, forked and prompted, the event stream framed into lines,
// permissions answered, an abort, per-request directories, and a stop that
// leaves nothing running.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import type { LineSink } from "../src/core/frame.ts";
import { isRunning } from "../src/io/proc.ts";
import { OpencodeServerError, type OpencodeServer } from "../src/io/opencode-server.ts";
import { startOpencodeServer } from "../src/io/opencode-start.ts";
import { peerOrSkip } from "./peers/peers.ts";
import { startOpenAIStandin, type Reply } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import { removeTempDirs, tempDir } from "./standins/util.ts";
import { leftAfter } from "./standins/world.ts";

const OPENCODE = peerOrSkip("opencode");

let next: (n: number) => Reply = () => ({ text: "Hello over HTTP." });
let calls = 0;
const standin = startOpenAIStandin((req) => (isTitleRequest(req) ? { text: "A title" } : next(++calls)));
const dir = tempDir("agentport-opencode-server-");
const project = join(dir, "project");
const other = join(dir, "other");
mkdirSync(project, { recursive: true });
mkdirSync(other, { recursive: true });
const env = opencodeEnv(dir, standin.url);

let server: OpencodeServer | null = null;
afterAll(async () => {
  await server?.stop();
  await standin.stop();
  removeTempDirs();
});

function script(replies: Reply[]): void {
  calls = 0;
  next = (n) => replies[Math.min(n - 1, replies.length - 1)]!;
}

/** Every event as parsed JSON, and a wait for the first one that matches. */
function collector() {
  const events: Record<string, any>[] = [];
  const waiters: { match: (e: Record<string, any>) => boolean; resolve: (e: Record<string, any>) => void }[] = [];
  const sink: LineSink = {
    line: (text) => {
      const event = JSON.parse(text);
      events.push(event);
      for (const w of [...waiters])
        if (w.match(event)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(event);
        }
    },
    oversize: () => {},
    framingError: () => {},
    unterminated: () => {},
  };
  const until = (match: (e: Record<string, any>) => boolean, ms = 60_000) =>
    Promise.race([
      new Promise<Record<string, any>>((resolve) => {
        const seen = events.find(match);
        if (seen) resolve(seen);
        else waiters.push({ match, resolve });
      }),
      Bun.sleep(ms).then(() => Promise.reject(new Error(`no matching event in ${ms} ms`))),
    ]);
  return { events, sink, until };
}

const idleOf = (id: string) => (e: Record<string, any>) => e.type === "session.idle" && e.properties?.sessionID === id;

describe.skipIf(OPENCODE === null)("the opencode serve client with the real opencode 1.18.33", () => {
  test("starts on a port of its own, says where, and refuses a request without the password (or with a wrong one)", async () => {
    server = await startOpencodeServer({ bin: OPENCODE!, cwd: project, env });
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.startMs).toBeGreaterThan(0);
    const bare = await fetch(`${server.url}/session`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(bare.status).toBe(401);
    const wrong = await fetch(`${server.url}/event`, {
      headers: { authorization: `Basic ${Buffer.from("opencode:not-the-password").toString("base64")}` },
    });
    expect(wrong.status).toBe(401);
    // The same request with it is answered.
    const right = await fetch(`${server.url}/session`, { headers: { authorization: server.authorization } });
    expect(right.status).toBe(200);
  }, 60_000);

  test("a session prompted over HTTP: 204 at once, its events framed as lines until session.idle, the history", async () => {
    script([{ text: "Hello over HTTP.", usage: { input: 1000, output: 5 } }]);
    const c = collector();
    const stream = server!.events(c.sink);
    await stream.opened;
    const session = await server!.createSession({ title: "client test" });
    expect(session.id).toStartWith("ses_");
    expect(realpathSync(session.directory!)).toBe(project);
    await server!.promptAsync(session.id, { text: "Say hi." });
    await c.until(idleOf(session.id));
    const final = c.events.findLast(
      (e) => e.type === "message.updated" && e.properties.info.role === "assistant" && e.properties.sessionID === session.id,
    );
    expect(final?.properties.info).toMatchObject({ finish: "stop", tokens: { input: 1000, output: 5 } });
    expect(c.events.some((e) => e.type === "message.part.delta")).toBe(true);
    const history = await server!.messages(session.id);
    expect(history.map((m) => m.info.role)).toEqual(["user", "assistant"]);
    // A fork holds the history under a new id.
    const fork = await server!.forkSession(session.id);
    expect(fork.id).not.toBe(session.id);
    expect((await server!.messages(fork.id)).length).toBe(2);
    stream.close();
    expect(await stream.ended).toEqual({ kind: "cancelled" });
  }, 90_000);

  test("a permission asked on the stream is answered over HTTP: reject with a message reaches the model", async () => {
    script([{ toolCall: { name: "bash", arguments: { command: "touch nope.txt", description: "make" } } }, { text: "Understood." }]);
    const c = collector();
    const stream = server!.events(c.sink);
    await stream.opened;
    const session = await server!.createSession({ permission: [{ permission: "bash", pattern: "*", action: "ask" }] });
    await server!.promptAsync(session.id, { text: "Make a file" });
    const asked = await c.until((e) => e.type === "permission.asked" && e.properties.sessionID === session.id);
    expect(await server!.replyPermission(asked.properties.id, { reply: "reject", message: "not in this run" })).toBe(true);
    await c.until(idleOf(session.id));
    const tool = c.events.findLast((e) => e.type === "message.part.updated" && e.properties.part.type === "tool");
    expect(tool?.properties.part.state.status).toBe("error");
    expect(tool?.properties.part.state.error).toContain("not in this run");
    expect(calls).toBe(2);
    stream.close();
  }, 90_000);

  test("an abort ends a turn that hangs; directory= puts a session in another folder; unknown ids are http errors", async () => {
    script([{ text: "slow", chunkDelayMs: 60_000 }]);
    const c = collector();
    // The event stream is per directory too: a session elsewhere is heard on that folder's stream.
    const stream = server!.events(c.sink, { directory: other });
    await stream.opened;
    const session = await server!.createSession({}, { directory: other });
    expect(realpathSync(session.directory!)).toBe(other);
    await server!.promptAsync(session.id, { text: "Say hi." }, { directory: other });
    await c.until((e) => e.type === "session.status" && e.properties.sessionID === session.id && e.properties.status.type === "busy");
    expect(await server!.abort(session.id, { directory: other })).toBe(true);
    stream.close();
    const missing = await server!.promptAsync("ses_doesnotexist000000", { text: "x" }).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpencodeServerError);
    expect((missing as OpencodeServerError).code).toBe("http");
  }, 90_000);

  test("stop: the server and everything it started are gone", async () => {
    const pid = server!.pid;
    await server!.stop();
    expect(isRunning(pid)).toBe(false);
    expect(await leftAfter(project)).toEqual([]);
    server = null;
  }, 30_000);

  test("a binary that never says it is listening: start_timeout, and nothing left", async () => {
    const fake = join(dir, "silent.sh");
    await Bun.write(fake, "#!/bin/sh\nsleep 60\n");
    const { chmodSync } = await import("node:fs");
    chmodSync(fake, 0o755);
    const failed = await startOpencodeServer({ bin: fake, cwd: other, env, startTimeoutMs: 500 }).catch((e: unknown) => e);
    expect((failed as OpencodeServerError).code).toBe("start_timeout");
    expect(await leftAfter(other)).toEqual([]);
    const missing = await startOpencodeServer({ bin: join(dir, "no-such-opencode"), cwd: other, env }).catch((e: unknown) => e);
    expect((missing as OpencodeServerError).code).toBe("not_found");
  }, 30_000);
});
