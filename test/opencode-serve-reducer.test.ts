// The opencode serve reducer (src/core/opencode/serve-reducer.ts) on the
// captured serve event streams (../shared/fixtures/opencode/f-serve.*.serve-events.jsonl,
// each event's data as one line in test/fixtures/opencode-serve/), then on
// synthetic events for what the captures do not hold (a cut-stream loop, an
// invalid tool, a stream that ends before idle). Verdicts through the judge.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LineFramer } from "../src/core/frame.ts";
import { judge } from "../src/core/judge.ts";
import { LoopDetector } from "../src/core/loop-detector.ts";
import { NO_PROCESS } from "../src/core/outcome.ts";
import { OpencodeServeReducer, type PermissionAsked, type ServeReducerOptions } from "../src/core/opencode/serve-reducer.ts";
import { ROOT } from "./helpers.ts";

const DIR = join(ROOT, "test", "fixtures", "opencode-serve");
const fixture = (name: string) => readFileSync(join(DIR, `${name}.events.jsonl`), "utf8");

function reduce(text: string, options: ServeReducerOptions = {}) {
  const reducer = new OpencodeServeReducer({ cwd: "/work", ...options });
  const framer = new LineFramer(reducer);
  framer.push(new TextEncoder().encode(text));
  framer.end();
  reducer.streamEnded();
  const r = reducer.reduction();
  return { r, verdict: judge({ agent: "opencode", reduction: r, proc: NO_PROCESS }).verdict };
}

const ev = (type: string, properties: Record<string, unknown>) =>
  JSON.stringify({ id: `evt_${Math.random()}`, type, properties: { sessionID: "ses_aaaaaaaaaaaa", ...properties } });
const assistant = (id: string, extra: Record<string, unknown>) =>
  ev("message.updated", {
    info: {
      id,
      role: "assistant",
      providerID: "standin",
      modelID: "m",
      cost: 0,
      tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
      ...extra,
    },
  });
const part = (p: Record<string, unknown>) => ev("message.part.updated", { part: p });
const lines = (...l: string[]) => l.join("\n") + "\n";

describe("the serve reducer on the captured streams", () => {
  test("basic: the text from its deltas and final part, the assistant message's tokens and cost, completed at session.idle", () => {
    const { r, verdict } = reduce(fixture("basic"));
    expect(r.sessionId).toBe("ses_dcf9f8749ffeGjLMmhV0kIZ12y");
    expect(verdict).toMatchObject({ status: "completed", ok: true, text: "Hello over HTTP.", stop_reason: "stop", cost_micro_usd: 2453 });
    expect(verdict.tokens).toEqual({ input: 2443, output: 5, cache_read: 0, cache_write: 0 });
    expect(r.model).toBe("standin/standin-model");
    // The server's noise (plugin.added ×45, catalog.updated, …) is not the session's.
    expect(r.summary.other_events).toBeGreaterThan(45);
  });

  test("permission: one allowed, one rejected (recorded as refused), the model answered after the rejection; three messages summed", () => {
    const asked: PermissionAsked[] = [];
    const { r, verdict } = reduce(fixture("permission"), { onPermission: (a) => asked.push(a) });
    expect(asked.map((a) => [a.permission, a.subject])).toEqual([
      ["bash", "touch one.txt"],
      ["bash", "touch two.txt"],
    ]);
    expect(asked[0]!.id).toStartWith("per_");
    expect(verdict).toMatchObject({ status: "completed", text: "Done.", cost_micro_usd: 2483 + 2550 + 2603 });
    expect(verdict.refused).toEqual([{ kind: "permission", subject: "bash: touch two.txt (rejected)" }]);
    expect(verdict.tokens).toEqual({ input: 2443 + 2510 + 2599, output: 42, cache_read: 0, cache_write: 0 });
    expect(r.summary).toMatchObject({ permissions_asked: 2, permissions_allowed: 1, tool_calls: 2, tool_errors: 1 });
  });

  test("error: five retries visible, then session.error: failed, a provider error with its status, classified", () => {
    const retries: string[] = [];
    const { r, verdict } = reduce(fixture("error"), { emit: (e) => e.kind === "provider_retry" && retries.push(e.detail ?? "") });
    expect(retries).toEqual(["attempt 1", "attempt 2", "attempt 3", "attempt 4", "attempt 5"]);
    expect(verdict.status).toBe("failed");
    expect(verdict.failure?.kind).toBe("provider_error");
    expect(verdict.failure?.message).toContain("APIError: standin: internal error");
    expect(r.summary).toMatchObject({ retries: 5, api_error_status: 500, last_retry_error: "standin: internal error" });
    expect(verdict.fault).not.toBeNull();
  });

  test("abort: the aborted message is opencode's MessageAbortedError, failed (a supervisor's stop names its own status)", () => {
    const { r, verdict } = reduce(fixture("abort"));
    expect(verdict.status).toBe("failed");
    expect(verdict.failure?.message).toContain("MessageAbortedError");
    const stalled = judge({
      agent: "opencode",
      reduction: r,
      proc: { ...NO_PROCESS, stoppedBy: "stall", stopReason: "no output for 5 s", finishedAtStop: false },
    }).verdict;
    expect(stalled.status).toBe("stalled");
  });

  test("two sessions on one server: each read apart by its id, the first named one by default", () => {
    const text = fixture("twosessions");
    const first = reduce(text);
    const ids = [...new Set(text.match(/ses_[A-Za-z0-9]+/g))];
    expect(ids.length).toBe(2);
    const a = reduce(text, { sessionId: ids[0] });
    const b = reduce(text, { sessionId: ids[1] });
    expect(first.r.sessionId).toBe(ids[0]!);
    expect(a.verdict.status).toBe("completed");
    expect(b.verdict.status).toBe("completed");
    expect(a.r.summary.session_events).toBeLessThan(Number(first.r.summary.records));
    expect(Number(a.r.summary.session_events) + Number(b.r.summary.session_events)).toBeLessThanOrEqual(Number(first.r.summary.records));
  });
});

describe("the serve reducer on synthetic events", () => {
  test("a stream cut again and again: each unknown step is the same action, the loop detector trips", () => {
    const detector = new LoopDetector({ repeat: 5 });
    const steps: string[] = [];
    for (let i = 0; i < 8; i++)
      steps.push(
        assistant(`msg_${i}`, {}),
        part({ id: `p${i}`, type: "step-start" }),
        part({ id: `f${i}`, type: "step-finish", reason: "unknown" }),
        assistant(`msg_${i}`, { finish: "unknown" }),
      );
    const reducer = new OpencodeServeReducer({ loop: detector });
    const framer = new LineFramer(reducer);
    framer.push(new TextEncoder().encode(lines(...steps)));
    expect(detector.verdict()?.kind).toBeDefined();
    framer.end();
    reducer.streamEnded();
    expect(reducer.reduction().failure?.kind).toBe("no_result");
  });

  test("idle after a cut step: a provider error; after tool-calls: no result; idle with an invalid tool then text: completed, named", () => {
    const cut = reduce(
      lines(assistant("m1", { finish: "unknown" }), part({ id: "f", type: "step-finish", reason: "unknown" }), ev("session.idle", {})),
    );
    expect(cut.verdict.failure?.kind).toBe("provider_error");
    const tools = reduce(lines(assistant("m1", { finish: "tool-calls" }), ev("session.idle", {})));
    expect(tools.verdict.failure?.kind).toBe("no_result");
    const invalid = reduce(
      lines(
        part({ id: "t1", type: "tool", tool: "invalid", state: { status: "completed", input: { tool: "no_such_tool" } } }),
        assistant("m1", { finish: "tool-calls" }),
        part({ id: "x1", type: "text", text: "", time: { start: 1 } }),
        ev("message.part.delta", { partID: "x1", field: "text", delta: "Fine" }),
        ev("message.part.delta", { partID: "x1", field: "text", delta: " then." }),
        assistant("m2", { finish: "stop", tokens: { input: 10, output: 2, reasoning: 1, cache: { read: 3, write: 0 } }, cost: 0.00001 }),
        ev("session.idle", {}),
      ),
    );
    expect(invalid.verdict).toMatchObject({ status: "completed", text: "Fine then.", cost_micro_usd: 10 });
    expect(invalid.verdict.refused).toEqual([{ kind: "permission", subject: "no_such_tool (not offered)" }]);
    expect(invalid.verdict.tokens).toEqual({ input: 10, output: 3, cache_read: 3, cache_write: 0 });
  });

  test("the event stream ends before idle: no result; other sessions' events and events without a session are not read", () => {
    const cut = reduce(lines(ev("session.status", { status: { type: "busy" } }), part({ id: "x", type: "text", text: "hal" })));
    expect(cut.verdict.failure?.kind).toBe("no_result");
    expect(cut.verdict.failure?.message).toContain("before the session was idle");
    const other = reduce(
      lines(JSON.stringify({ type: "server.heartbeat", properties: {} }), ev("session.idle", { sessionID: "ses_other000000" })),
      { sessionId: "ses_aaaaaaaaaaaa" },
    );
    expect(other.r.summary.session_events).toBe(0);
    expect(other.verdict.failure?.message).toContain("no event of the session");
  });

  test("the stall clock's count: the session's events move it, the server's heartbeats and other sessions' events do not", () => {
    const reducer = new OpencodeServeReducer({ sessionId: "ses_aaaaaaaaaaaa" });
    reducer.line(JSON.stringify({ id: "evt_1", type: "server.heartbeat", properties: {} }));
    reducer.line(ev("session.status", { sessionID: "ses_other000000", status: { type: "busy" } }));
    expect(reducer.seen).toBe(0);
    reducer.line(ev("session.status", { status: { type: "busy" } }));
    expect(reducer.seen).toBe(1);
  });

  test("a retry pending when the run is stopped: the judge classifies the stop by it", () => {
    const reducer = new OpencodeServeReducer();
    reducer.line(ev("session.status", { status: { type: "retry", attempt: 1, message: "Rate limit exceeded", next: 0 } }));
    expect(reducer.reduction().pendingRetryError).toBe("Rate limit exceeded");
    reducer.line(part({ id: "x", type: "text", text: "ok" }));
    expect(reducer.reduction().pendingRetryError).toBeNull();
  });
});
