// The fake `opencode serve`: the HTTP / SSE surface agentport uses, as
// captured from opencode 1.18.33 (ground truth §6), playing the scenario
// language (../scenario.ts) as serve events. The password of
// OPENCODE_SERVER_PASSWORD (basic auth, user opencode) is required when set;
// `GET /event` is SSE (`server.connected` first); `POST /session` names a
// `ses_…` session; `prompt_async` answers 204 and plays the scenario on the
// stream; a refused step asks a permission and waits for its reply (a
// rejection's message goes on, as opencode's does); `abort` ends the turn
// with MessageAbortedError; the turn ends with `session.idle`. A prompt into a
// busy session is taken at the next step, as opencode's loop does: the fake
// answers it ("Wrapping up: …", then its script's last text) and ends the
// turn. `fork` copies a session (in its folder), the control plane's
// `move-session` moves one. With $AGENTPORT_FAKE_SERVE_SCENARIOS (a folder),
// the n-th session prompted (0 first) plays `n.json` there when it exists: one
// server, a script per session (bon's prime and its arms, one after the other).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve as absolute } from "node:path";
import { missingDeclaration } from "../ledger-check.ts";
import { startGrandchild } from "../runtime.ts";
import { ScenarioSchema, type Scenario, type Step } from "../scenario.ts";

const REJECTED = "The user rejected permission to use this specific tool call";
const PRICE = { input: 1, output: 2 };
const CUT_RETRY_MS = 50;

type Send = (type: string, properties: Record<string, unknown>) => void;

interface PromptInFlight {
  aborted: boolean;
  wake: () => void;
  /** Prompts that came while the turn played. */
  told: string[];
  playing: boolean;
}

let counter = 0;
const nextId = (prefix: string) => `${prefix}_fake${Date.now().toString(16)}${(counter++).toString().padStart(6, "0")}`;

export async function fakeOpencodeServe(scenario: Scenario, sessionsDir: string, newSessionId: () => string): Promise<number> {
  const password = process.env.OPENCODE_SERVER_PASSWORD ?? "";
  const expected = password
    ? `Basic ${Buffer.from(`${process.env.OPENCODE_SERVER_USERNAME ?? "opencode"}:${password}`).toString("base64")}`
    : null;
  const streams = new Set<ReadableStreamDefaultController<Uint8Array>>();
  const encoder = new TextEncoder();
  const send: Send = (type, properties) => {
    const line = encoder.encode(`data: ${JSON.stringify({ id: nextId("evt"), type, properties })}\n\n`);
    for (const c of streams) c.enqueue(line);
  };
  const turns = new Map<string, PromptInFlight>();
  let prompted = 0;
  const replies = new Map<string, (reply: { reply: string; message?: string }) => void>();
  mkdirSync(sessionsDir, { recursive: true });
  const known = (id: string) => existsSync(join(sessionsDir, id));
  const info = (id: string) => ({
    id,
    directory: known(id) ? readFileSync(join(sessionsDir, id), "utf8") : process.cwd(),
    title: "fake",
    version: "1.18.33",
  });

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(req) {
      if (expected !== null && req.headers.get("authorization") !== expected) return new Response("Unauthorized", { status: 401 });
      const url = new URL(req.url);
      const path = url.pathname.split("/").filter(Boolean);
      if (req.method === "GET" && url.pathname === "/event") {
        let mine: ReadableStreamDefaultController<Uint8Array> | null = null;
        const body = new ReadableStream<Uint8Array>({
          start: (c) => {
            mine = c;
            streams.add(c);
            c.enqueue(encoder.encode(`data: ${JSON.stringify({ id: nextId("evt"), type: "server.connected", properties: {} })}\n\n`));
          },
          cancel: () => void (mine !== null && streams.delete(mine)),
        });
        return new Response(body, { headers: { "content-type": "text/event-stream" } });
      }
      const create = (directory: string) => {
        const id = newSessionId();
        writeFileSync(join(sessionsDir, id), directory);
        send("session.created", { sessionID: id, info: info(id) });
        return Response.json(info(id));
      };
      if (req.method === "POST" && url.pathname === "/session") return create(url.searchParams.get("directory") ?? process.cwd());
      if (req.method === "POST" && url.pathname === "/experimental/control-plane/move-session") {
        const body = (await req.json()) as { sessionID: string; destination: { directory: string } };
        if (!known(body.sessionID)) return Response.json({ name: "NotFoundError" }, { status: 404 });
        writeFileSync(join(sessionsDir, body.sessionID), body.destination.directory);
        return new Response(null, { status: 204 });
      }
      if (path[0] === "session" && path[1] !== undefined) {
        const id = path[1];
        if (!known(id)) return Response.json({ name: "NotFoundError", data: { message: `Session not found: ${id}` } }, { status: 404 });
        if (req.method === "GET" && path.length === 2) return Response.json(info(id));
        if (req.method === "POST" && path[2] === "fork") return create(info(id).directory);
        if (req.method === "POST" && path[2] === "prompt_async") {
          // With $AGENTPORT_FAKE_CHECK_LEDGER: the session must be bound in agentport's ledger before its first prompt.
          const busy = turns.get(id);
          if (busy?.playing) {
            const body = (await req.json().catch(() => ({}))) as { parts?: { text?: string }[] };
            busy.told.push(body.parts?.map((p) => p.text ?? "").join("") ?? "");
            return new Response(null, { status: 204 });
          }
          const undeclared = missingDeclaration(id);
          if (undeclared !== null)
            return Response.json({ name: "UnknownError", data: { message: `fake-opencode: ${undeclared}` } }, { status: 500 });
          // A session prompted before (by another server too) plays the scenario's `resumed` steps.
          const marker = join(sessionsDir, `${id}.prompted`);
          const resumed = existsSync(marker);
          writeFileSync(marker, "");
          const own = ownScript(prompted++);
          const steps = resumed && scenario.resumed !== undefined ? scenario.resumed : (own ?? scenario.steps);
          const turn: PromptInFlight = { aborted: false, wake: () => {}, told: [], playing: true };
          turns.set(id, turn);
          void new FakeServeTurn(id, scenario, send, turn, replies).play(steps);
          return new Response(null, { status: 204 });
        }
        if (req.method === "POST" && path[2] === "abort") {
          const turn = turns.get(id);
          if (turn !== undefined) {
            turn.aborted = true;
            turn.wake();
          }
          return Response.json(true);
        }
      }
      if (req.method === "POST" && path[0] === "permission" && path[2] === "reply" && path[1] !== undefined) {
        const answer = replies.get(path[1]);
        if (answer === undefined) return Response.json(false, { status: 404 });
        answer((await req.json()) as { reply: string; message?: string });
        return Response.json(true);
      }
      return new Response("not faked", { status: 404 });
    },
  });
  process.stdout.write(`opencode server listening on http://127.0.0.1:${server.port}\n`);
  await new Promise<void>((resolve) => process.on("SIGTERM", () => resolve()));
  void server.stop(true);
  return 143;
}

/** The n-th session's own script ($AGENTPORT_FAKE_SERVE_SCENARIOS/n.json), else null. */
function ownScript(n: number): Step[] | null {
  const dir = process.env.AGENTPORT_FAKE_SERVE_SCENARIOS;
  const file = dir ? join(dir, `${n}.json`) : null;
  return file !== null && existsSync(file) ? ScenarioSchema.parse(JSON.parse(readFileSync(file, "utf8"))).steps : null;
}

class FakeServeTurn {
  private message = "";
  private parts = 0;

  constructor(
    private readonly id: string,
    private readonly scenario: Scenario,
    private readonly send: Send,
    private readonly turn: PromptInFlight,
    private readonly replies: Map<string, (reply: { reply: string; message?: string }) => void>,
  ) {}

  async play(steps: readonly Step[]): Promise<void> {
    // After the 204, as opencode's loop runs.
    await Bun.sleep(0);
    this.status("busy");
    for (const step of steps) {
      if (this.turn.told.length > 0) {
        // Its reply ends as the script would have (its last text: a final message, an envelope).
        const last = steps.findLast((s) => "text" in s);
        const tail = last !== undefined && "text" in last ? `\n\n${last.text}` : "";
        await this.step({ text: `Wrapping up: ${this.turn.told.join(" ")}${tail}` });
        await this.step({ done: true });
        break;
      }
      if (this.turn.aborted || (await this.step(step)) === "end") break;
    }
    this.turn.playing = false;
    if (this.turn.aborted) this.assistant("", { error: { name: "MessageAbortedError", data: { message: "Aborted" } } });
    this.status("idle");
    this.send("session.idle", { sessionID: this.id });
  }

  private status(type: string, extra: Record<string, unknown> = {}): void {
    this.send("session.status", { sessionID: this.id, status: { type, ...extra } });
  }

  private open(): void {
    if (this.message !== "") return;
    this.message = nextId("msg");
    this.assistant("", {});
    this.part("step-start", {});
  }

  private part(type: string, fields: Record<string, unknown>, id = `prt_fake${this.parts++}`): string {
    this.send("message.part.updated", { sessionID: this.id, part: { id, messageID: this.message, sessionID: this.id, type, ...fields } });
    return id;
  }

  private assistant(finish: string, extra: Record<string, unknown>, spent = false): void {
    const u = spent ? this.scenario.usage : { input: 0, cached: 0, output: 0 };
    const tokens = {
      total: u.input + u.output,
      input: u.input - u.cached,
      output: u.output,
      reasoning: 0,
      cache: { read: u.cached, write: 0 },
    };
    const cost = spent ? ((u.input - u.cached) * PRICE.input + u.output * PRICE.output) / 1e6 : 0;
    const info = {
      id: this.message || nextId("msg"),
      role: "assistant",
      sessionID: this.id,
      providerID: "fake",
      modelID: "fake-model",
      tokens,
      cost,
      ...(finish ? { finish } : {}),
      ...extra,
    };
    this.send("message.updated", { sessionID: this.id, info });
  }

  private finish(reason: string, spent: boolean): void {
    this.part("step-finish", { reason });
    this.assistant(reason, {}, spent);
    this.message = "";
  }

  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.turn.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async step(step: Step): Promise<"end" | undefined> {
    if ("text" in step || "tool" in step || "refused" in step || "write" in step || "cut" in step || "done" in step) this.open();
    if ("text" in step) {
      const id = this.part("text", { text: "", time: { start: Date.now() } });
      this.send("message.part.delta", { sessionID: this.id, messageID: this.message, partID: id, field: "text", delta: step.text });
      this.part("text", { text: step.text, time: { start: Date.now(), end: Date.now() } }, id);
    } else if ("tool" in step) {
      const tool = step.tool.name === "shell" ? "bash" : step.tool.name;
      const id = this.part("tool", { tool, state: { status: "pending", input: {} } });
      this.part("tool", { tool, state: { status: "completed", input: step.tool.input, output: step.tool.result } }, id);
      this.finish("tool-calls", true);
    } else if ("refused" in step || "write" in step) {
      // As opencode asks: bash by its command; a write as `edit`, by the path relative to the folder and its absolute filepath.
      const [tool, permission, pattern, input, metadata] =
        "refused" in step
          ? ["bash", "bash", step.refused, { command: step.refused, description: "refused" }, {}]
          : [
              "write",
              "edit",
              step.write,
              { filePath: absolute(step.write), content: "written by fake-opencode\n" },
              { filepath: absolute(step.write) },
            ];
      const id = this.part("tool", { tool, state: { status: "running", input } });
      const request = nextId("per");
      const answered = new Promise<{ reply: string; message?: string }>((resolve) => this.replies.set(request, resolve));
      this.send("permission.asked", { id: request, sessionID: this.id, permission, patterns: [pattern], metadata, always: [] });
      const answer = await Promise.race([answered, this.sleep(1 << 30).then(() => null)]);
      this.replies.delete(request);
      if (answer === null) return "end";
      this.send("permission.replied", { sessionID: this.id, requestID: request, reply: answer.reply });
      if (answer.reply !== "reject" && "filePath" in input) writeFileSync(input.filePath, input.content);
      const state =
        answer.reply === "reject"
          ? {
              status: "error",
              input,
              error: answer.message ? `${REJECTED} with the following feedback: ${answer.message}` : `${REJECTED}.`,
            }
          : { status: "completed", input, output: "" };
      this.part("tool", { tool, state }, id);
      this.finish("tool-calls", true);
    } else if ("retry" in step) {
      this.status("retry", { attempt: 1, message: step.retry, next: Date.now() });
      this.status("busy");
    } else if ("fail" in step) {
      const status = /\b([45]\d\d)\b/.exec(step.fail)?.[1];
      const error = { name: "APIError", data: { message: step.fail, ...(status === undefined ? {} : { statusCode: Number(status) }) } };
      this.assistant("", { error });
      this.send("session.error", { sessionID: this.id, error });
      return "end";
    } else if ("done" in step) {
      this.finish("stop", true);
    } else if ("cut" in step) {
      while (!this.turn.aborted) {
        this.open();
        this.part("text", { text: step.cut, time: { start: Date.now() } });
        this.finish("unknown", false);
        await this.sleep(CUT_RETRY_MS);
      }
    } else if ("sleep" in step) {
      await this.sleep(step.sleep);
    } else if ("hang" in step) {
      await this.sleep(1 << 30);
    } else if ("signal" in step) {
      // The server dies mid-turn (a crash agentport did not cause).
      process.kill(process.pid, step.signal);
    } else if ("grandchild" in step) {
      await startGrandchild(step.grandchild, step.ownGroup);
    }
    return undefined;
  }
}
