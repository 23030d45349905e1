// The ACP client reducer on the transcripts recorded from real `gemini --acp`
// 0.61.0 and `opencode acp` 1.18.33 (../shared/fixtures/acp, copied into
// test/fixtures/acp): the agent's side is fed back through the line framer,
// agentport's side is what the reducer writes, and the permission answers and
// cancels must be the ones the transcript holds. Then hostile input.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AcpClient, type AcpClientOptions } from "../src/core/acp/reducer.ts";
import { chooseMode } from "../src/core/acp/modes.ts";
import type { PermissionMode } from "../src/core/agents.ts";
import { LineFramer } from "../src/core/frame.ts";
import { judge } from "../src/core/judge.ts";
import { NO_PROCESS } from "../src/core/outcome.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import { ROOT } from "./helpers.ts";

const DIR = join(ROOT, "test", "fixtures", "acp");
const NAMES = readdirSync(DIR)
  .filter((f) => f.endsWith(".jsonl"))
  .map((f) => f.slice(0, -6));
type Entry = { t: number; dir: "in" | "out"; msg: any };
const entries = (name: string): Entry[] =>
  readFileSync(join(DIR, `${name}.jsonl`), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
const enc = new TextEncoder();

/** Replays one transcript: the agent's lines in, the client's writes collected; a cancel where the transcript's client sent one. */
function replay(name: string, options: Partial<AcpClientOptions> = {}) {
  const all = entries(name);
  const firstSession = all.find((e) => e.dir === "out" && (e.msg.method === "session/new" || e.msg.method === "session/load"))!.msg;
  const prompt = all.find((e) => e.dir === "out" && e.msg.method === "session/prompt")?.msg.params.prompt[0].text ?? "hi";
  const written: any[] = [];
  const events: ProgressEvent[] = [];
  const client = new AcpClient({
    cwd: firstSession.params.cwd,
    prompt,
    emit: (e) => events.push(e),
    loadSessionId: firstSession.method === "session/load" ? firstSession.params.sessionId : undefined,
    permissionMode: name.endsWith("-allow") ? "bypassPermissions" : undefined,
    ...options,
  });
  const framer = new LineFramer(client);
  client.start((m) => written.push(m));
  for (const entry of all) {
    if (entry.dir === "out" && entry.msg.method === "session/cancel") client.cancel();
    if (entry.dir === "in") framer.push(enc.encode(`${JSON.stringify(entry.msg)}\n`));
  }
  framer.end();
  client.streamEnded();
  const expectedOut = all.filter((e) => e.dir === "out").map((e) => e.msg);
  return { client, written, expectedOut, events, reduction: client.reduction() };
}

describe("ACP transcripts of real agents", () => {
  for (const name of NAMES) {
    test(`${name}: the client says what the recorded client said (methods, ids, permission answers)`, () => {
      const { written, expectedOut } = replay(name);
      const shape = (m: any) => [m.id ?? null, m.method ?? null, m.result?.outcome?.optionId ?? null];
      // A transcript ends where its recorder stopped: the client says no more than it, and the same.
      expect(written.map(shape)).toEqual(expectedOut.slice(0, written.length).map(shape));
    });
  }

  test("gemini text: the chunks joined, tokens from _meta.quota, no cost (unknown, not 0), completed", () => {
    const { reduction, events } = replay("gemini.text");
    expect(reduction.text).toBeTruthy();
    expect(reduction.stopReason).toBe("end_turn");
    expect(reduction.tokens?.input).toBeGreaterThan(0);
    expect(reduction.costMicroUsd).toBeNull();
    expect(reduction.costMicroUsd).toBeNull();
    expect(reduction.summary.agent_name).toBe("gemini-cli");
    expect(reduction.summary.agent_version).toBe("0.61.0");
    expect(String(reduction.summary.agent_capabilities)).toContain("loadSession");
    expect(reduction.model).toBe("gemini-2.5-flash");
    expect(events.some((e) => e.kind === "assistant_text")).toBe(true);
    expect(judge({ agent: "acp", reduction, proc: NO_PROCESS }).verdict.status).toBe("completed");
  });

  test("opencode text: the reported cost and its source", () => {
    const { reduction } = replay("opencode.text");
    expect(reduction.costMicroUsd).toBeGreaterThan(0);
    expect(reduction.costMicroUsd).not.toBeNull();
    expect(reduction.tokens?.output).toBeGreaterThan(0);
  });

  test("a rejected write is in refused with how to allow it; the tool never started running", () => {
    const { reduction } = replay("gemini.write-reject");
    expect(reduction.refused).toHaveLength(1);
    expect(reduction.refused[0]!.subject).toContain("edit made-by-write.txt: rejected; allow it with --permission-mode acceptEdits");
    expect(reduction.text).toBe("Done.");
  });

  test("acceptEdits allows gemini's edit and rejects opencode's execute", () => {
    expect(replay("gemini.write-allow", { permissionMode: "acceptEdits" }).written.find((m) => m.id === 0).result.outcome.optionId).toBe(
      "proceed_once",
    );
    const shell = replay("opencode.bash-ask-reject", { permissionMode: "acceptEdits" });
    expect(shell.reduction.refused[0]!.subject).toContain("execute: rejected; allow it with --permission-mode bypassPermissions");
  });

  test("an allowed tool finishes; the loop observer sees it", () => {
    const { reduction, events } = replay("opencode.bash-ask-allow");
    expect(reduction.refused).toEqual([]);
    expect(reduction.toolCalls).toBe(1);
    expect(events.map((e) => e.kind)).toContain("tool_finished");
    expect(events.find((e) => e.kind === "tool_started")!.tool).toBe("execute");
  });

  test("hang cancelled: session/cancel sent, stopReason cancelled, finished", () => {
    for (const name of ["gemini.hang-cancel", "opencode.hang-cancel"]) {
      const { reduction, written } = replay(name);
      expect(written.some((m) => m.method === "session/cancel")).toBe(true);
      expect(reduction.stopReason).toBe("cancelled");
      expect(reduction.failure).toBeNull();
      expect(reduction.summary.cancel_sent).toBe(true);
    }
  });

  test("401: the prompt's error fails the run as the provider's, with the status for the fault", () => {
    const g = replay("gemini.401").reduction;
    expect(g.failure?.kind).toBe("provider_error");
    expect(g.summary.api_error_status).toBe(401);
    const decided = judge({ agent: "acp", reduction: g, proc: { ...NO_PROCESS, exitCode: 0 } });
    expect(decided.verdict.env_fault).toBe(true);
    expect(replay("opencode.401").reduction.failure?.message).toContain("Incorrect API key");
  });

  test("session/load: gemini from another folder fails with its own words; opencode's load goes on to the prompt", () => {
    expect(replay("gemini.load-other").reduction.failure?.message).toContain("No previous sessions found");
    const o = replay("opencode.load-birth").reduction;
    expect(o.stopReason).toBe("end_turn");
  });

  test("resume refused in one line when the agent does not advertise loadSession", () => {
    const written: any[] = [];
    const client = new AcpClient({ cwd: "/w", prompt: "p", loadSessionId: "s1" });
    client.start((m) => written.push(m));
    client.line(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1, agentInfo: { name: "x" }, agentCapabilities: {} } }));
    expect(client.reduction().failure).toEqual({
      kind: "refused",
      message: "acp: x does not advertise loadSession: its sessions cannot be resumed; start a new one with agentport run",
    });
    expect(written.map((m) => m.method)).toEqual(["initialize"]);
    expect(client.over()).toBe(true);
  });
});

describe("ACP hostile input", () => {
  const fresh = (mode?: AcpClientOptions["permissionMode"]) => {
    const written: any[] = [];
    const client = new AcpClient({ cwd: "/w", prompt: "p", permissionMode: mode });
    const framer = new LineFramer(client, 1024 * 1024);
    const feed = (m: unknown) => framer.push(enc.encode(`${typeof m === "string" ? m : JSON.stringify(m)}\n`));
    client.start((m) => written.push(m));
    return { client, written, feed, framer };
  };
  const ready = () => {
    const f = fresh();
    f.feed({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1, agentCapabilities: {} } });
    f.feed({ jsonrpc: "2.0", id: 2, result: { sessionId: "S" } });
    return f;
  };

  test("a 100 MB line is skipped by the framer, counted, and the run goes on", () => {
    const { client, framer, feed } = ready();
    const chunk = enc.encode("x".repeat(1024 * 1024));
    for (let i = 0; i < 100; i++) framer.push(chunk);
    framer.push(enc.encode("\n"));
    feed({
      jsonrpc: "2.0",
      method: "session/update",
      params: { sessionId: "S", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "ok" } } },
    });
    feed({ jsonrpc: "2.0", id: 3, result: { stopReason: "end_turn" } });
    expect(client.reduction().summary.oversize_records).toBe(1);
    expect(client.reduction().text).toBe("ok");
  });

  test("deep JSON in an update's fields costs nothing and breaks nothing", () => {
    const { client, feed } = ready();
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    feed(
      `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"tool_call","toolCallId":"t","kind":"read","rawInput":${deep},"status":"completed"}}}`,
    );
    feed({ jsonrpc: "2.0", id: 3, result: { stopReason: "end_turn" } });
    expect(client.reduction().toolCalls).toBe(1);
    expect(client.reduction().failure).toBeNull();
  });

  test("an unknown method: a request is answered method-not-found, a notification counted", () => {
    const { client, feed, written } = ready();
    feed({ jsonrpc: "2.0", id: 77, method: "terminal/create", params: { command: "rm" } });
    feed({ jsonrpc: "2.0", method: "x/y" });
    expect(written.at(-1)).toEqual({
      jsonrpc: "2.0",
      id: 77,
      error: { code: -32601, message: "agentport does not serve terminal/create" },
    });
    expect(client.reduction().summary.unknown_methods).toBe(2);
  });

  test("a reused request id: both requests answered, a response id answered twice taken once", () => {
    const { client, feed, written } = ready();
    const ask = {
      jsonrpc: "2.0",
      id: 5,
      method: "session/request_permission",
      params: { sessionId: "S", toolCall: { toolCallId: "a", kind: "execute" }, options: [{ optionId: "no", kind: "reject_once" }] },
    };
    feed(ask);
    feed(ask);
    expect(written.filter((m) => m.id === 5)).toHaveLength(2);
    feed({ jsonrpc: "2.0", id: 3, result: { stopReason: "end_turn" } });
    feed({ jsonrpc: "2.0", id: 3, result: { stopReason: "refusal" } });
    expect(client.reduction().stopReason).toBe("end_turn");
  });

  test("a notification and a request before initialize's answer change nothing", () => {
    const { client, feed, written } = fresh();
    feed({
      jsonrpc: "2.0",
      method: "session/update",
      params: { sessionId: "S", update: { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "planted" } } },
    });
    feed({ jsonrpc: "2.0", id: 9, method: "session/request_permission", params: {} });
    expect(client.reduction().summary.early_messages).toBe(2);
    expect(written.at(-1).error.code).toBe(-32600);
  });

  test("loop detection: every finished tool call reaches the loop observer by kind, input and result", () => {
    const actions: string[] = [];
    const written: any[] = [];
    const client = new AcpClient({
      cwd: "/w",
      prompt: "p",
      loop: { action: (tool, fp) => actions.push(`${tool}|${fp}`), retry: () => {}, turn: () => {} },
    });
    const framer = new LineFramer(client);
    client.start((m) => written.push(m));
    const feed = (m: unknown) => framer.push(enc.encode(`${JSON.stringify(m)}\n`));
    feed({ jsonrpc: "2.0", id: 1, result: { protocolVersion: 1 } });
    feed({ jsonrpc: "2.0", id: 2, result: { sessionId: "S" } });
    for (let i = 0; i < 3; i++) {
      feed({
        jsonrpc: "2.0",
        method: "session/update",
        params: {
          sessionId: "S",
          update: { sessionUpdate: "tool_call", toolCallId: `t${i}`, kind: "execute", rawInput: { command: "ls" }, status: "pending" },
        },
      });
      feed({
        jsonrpc: "2.0",
        method: "session/update",
        params: { sessionId: "S", update: { sessionUpdate: "tool_call_update", toolCallId: `t${i}`, status: "completed" } },
      });
    }
    expect(actions).toHaveLength(3);
    expect(new Set(actions).size).toBe(1);
    expect(actions[0]!.startsWith("execute|")).toBe(true);
  });

  test("a stopReason outside the list fails as a protocol violation; max_tokens is token_limit", () => {
    const a = ready();
    a.feed({ jsonrpc: "2.0", id: 3, result: { stopReason: "weird" } });
    expect(a.client.reduction().failure?.kind).toBe("protocol");
    const b = ready();
    b.feed({ jsonrpc: "2.0", id: 3, result: { stopReason: "max_tokens" } });
    expect(b.client.reduction().failure?.kind).toBe("token_limit");
    const c = ready();
    c.feed({ jsonrpc: "2.0", id: 3, result: { stopReason: "max_turn_requests" } });
    expect(c.client.reduction().failure?.kind).toBe("turn_limit");
  });

  test("a non-JSON line is a protocol failure and ends the conversation", () => {
    const { client, feed } = ready();
    feed("not json");
    expect(client.reduction().failure?.kind).toBe("protocol");
    expect(client.over()).toBe(true);
  });
});

describe("the agent's modes against --permission-mode (chooseMode)", () => {
  const claude = {
    currentModeId: "auto",
    availableModes: ["auto", "default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"].map((id) => ({ id, name: id })),
  };
  const gemini = (current: string) => ({
    currentModeId: current,
    availableModes: ["default", "autoEdit", "yolo", "plan"].map((id) => ({ id, name: id })),
  });
  const rows: [string, unknown, PermissionMode | undefined, { current: string | null; set: string | null }][] = [
    ["claude-agent-acp, no mode given: out of auto into default", claude, undefined, { current: "auto", set: "default" }],
    ["claude-agent-acp, acceptEdits", claude, "acceptEdits", { current: "auto", set: "acceptEdits" }],
    ["claude-agent-acp, bypassPermissions: its own mode kept", claude, "bypassPermissions", { current: "auto", set: null }],
    ["gemini already in default", gemini("default"), "default", { current: "default", set: null }],
    ["gemini in yolo, no mode given: into default", gemini("yolo"), undefined, { current: "yolo", set: "default" }],
    ["gemini, acceptEdits: its autoEdit", gemini("default"), "acceptEdits", { current: "default", set: "autoEdit" }],
    ["gemini, plan", gemini("default"), "plan", { current: "default", set: "plan" }],
    ["no modes (opencode): nothing to set", undefined, "default", { current: null, set: null }],
    [
      "modes of unknown ids: nothing to set, the current one recorded",
      { currentModeId: "build", availableModes: [{ id: "build" }, { id: "plan-x" }] },
      undefined,
      { current: "build", set: null },
    ],
    ["hostile: not a list, ids not strings", { currentModeId: 7, availableModes: "default" }, undefined, { current: null, set: null }],
  ];
  for (const [name, modes, mode, expected] of rows) test(name, () => expect(chooseMode(modes, mode)).toEqual(expected));
});
