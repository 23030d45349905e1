// The gemini reducer on every stream captured from real gemini 0.61.0
// (../shared/fixtures/gemini, copied into test/fixtures/gemini): each
// capture's reduction is checked against what its own records say, then the
// cases the sheet singles out.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { GeminiReducer, type GeminiReducerOptions } from "../src/core/gemini/reducer.ts";
import { judge } from "../src/core/judge.ts";
import { LineFramer } from "../src/core/frame.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import { bare, ROOT } from "./helpers.ts";

const DIR = join(ROOT, "test", "fixtures", "gemini");
const CAPTURES = readdirSync(DIR)
  .filter((f) => f.endsWith(".jsonl"))
  .map((f) => f.slice(0, -".jsonl".length));

const read = (name: string, ext = "jsonl") =>
  existsSync(join(DIR, `${name}.${ext}`)) ? readFileSync(join(DIR, `${name}.${ext}`), "utf8") : "";

function reduceGemini(text: string, options: GeminiReducerOptions = {}) {
  const events: ProgressEvent[] = [];
  const reducer = new GeminiReducer({ ...options, emit: (e) => events.push(bare(e)) });
  const framer = new LineFramer(reducer);
  framer.push(new TextEncoder().encode(text));
  framer.end();
  reducer.streamEnded();
  return { reading: reducer.reduction(), events };
}

function records(text: string): any[] | null {
  const out: any[] = [];
  for (const line of text.split("\n").filter((l) => l.trim())) {
    try {
      out.push(JSON.parse(line));
    } catch {
      return null;
    }
  }
  return out;
}

/** The oracle: the assistant deltas after the last tool call, concatenated. */
function finalText(recs: any[]): string {
  let text = "";
  for (const r of recs) {
    if (r.type === "tool_use") text = "";
    if (r.type === "message" && r.role === "assistant") text += r.content;
  }
  return text;
}

describe("the gemini reducer on every capture", () => {
  test("there are captures", () => {
    expect(CAPTURES.length).toBeGreaterThan(50);
  });
  for (const name of CAPTURES) {
    test(name, () => {
      const stdout = read(name);
      const { reading } = reduceGemini(stdout);
      const recs = records(stdout);
      expect(reading.costMicroUsd).toBeNull();
      expect(reading.stopReason).toBeNull();
      if (recs === null) {
        // Text or pretty-printed json output: no stream-json to read.
        expect(reading.failure?.message).toContain("protocol violation");
        return;
      }
      const init = recs[0];
      expect(reading.sessionId).toBe(init?.type === "init" ? init.session_id : null);
      const refusals = recs.filter((r) => r.type === "tool_result" && ["tool_not_registered", "policy_violation"].includes(r.error?.type));
      expect(reading.refused.length).toBe(refusals.length);
      const result = recs.find((r) => r.type === "result");
      if (result === undefined) {
        expect(reading.text).toBeNull();
        expect(reading.finished).toBe(false);
        expect(reading.failure?.message).toBe(
          recs.length === 0 ? "gemini: exited without an init record" : "gemini: exited without a result record",
        );
        return;
      }
      expect(reading.finished).toBe(true);
      expect((reading.tokens?.input ?? -1) + (reading.tokens?.cache_read ?? -1)).toBe(result.stats.input_tokens);
      expect(reading.tokens?.output).toBe(result.stats.output_tokens);
      if (result.status === "success") {
        expect(reading.failure).toBeNull();
        expect(reading.text).toBe(finalText(recs));
      } else {
        expect(reading.text).toBeNull();
        expect(reading.failure?.message).toStartWith("gemini: the run ended in an error");
        const why = result.error?.message ?? recs.filter((r) => r.type === "error" && r.severity === "error").pop()?.message;
        if (why !== undefined) expect(reading.failure?.message).toContain(String(why).slice(0, 50));
      }
    });
  }
});

describe("what the gemini sheet singles out", () => {
  test("the final text is the deltas concatenated (after the last tool call, as gemini's own json response has it)", () => {
    expect(reduceGemini(read("a-plain.pinned")).reading.text).toBe("Hello from the stand-in.");
    const tools = reduceGemini(read("b-tools.yolo")).reading;
    expect(tools.text).toBe("All done.");
    expect(read("b-tools.yolo-json")).toContain('"response": "All done."');
    expect(tools.summary.tool_calls).toBe(5);
  });

  test("the verdict is result.status, not the exit code: a cut stream exits 0 and fails", () => {
    const cut = reduceGemini(read("c-errors.truncated")).reading;
    expect(cut.failure?.message).toBe("gemini: the run ended in an error: Model stream ended without a finish reason.");
    expect(
      judge({ agent: "pi", reduction: cut, proc: { exitCode: 0, signal: null, stoppedBy: null, stderrTail: "" } }).verdict.status,
    ).toBe("failed");
    // Killed by a signal: exit 0, no result record.
    const killed = reduceGemini(read("h-signals.sigterm-group")).reading;
    expect(judge({ agent: "pi", reduction: killed, proc: { exitCode: 0, signal: null, stoppedBy: null, stderrTail: "" } }).verdict.ok).toBe(
      false,
    );
  });

  test("a retry on stderr makes a stop the provider's only while gemini awaits the model", () => {
    const stderrTail = read("c-errors.ratelimit", "stderr.txt");
    const stopped = { exitCode: 0, signal: null, stoppedBy: "stall" as const, stderrTail };
    // Killed while it waited for its first answer (retrying the 429): a rate limit, the environment's.
    const waiting = reduceGemini(read("c-errors.hang")).reading;
    expect(waiting.awaitingModel).toBe(true);
    expect(judge({ agent: "gemini", reduction: waiting, proc: stopped }).verdict).toMatchObject({
      env_fault: true,
      fault: { kind: "rate_limit" },
    });
    // Killed after the answer began: the retry worked; neither the stop nor a crash is the provider's.
    const lines = read("c-errors.ratelimit").split("\n");
    const answering = reduceGemini(lines.slice(0, 3).join("\n") + "\n").reading;
    expect(answering.awaitingModel).toBe(false);
    expect(judge({ agent: "gemini", reduction: answering, proc: stopped }).verdict).toMatchObject({ env_fault: false, fault: null });
    expect(
      judge({ agent: "gemini", reduction: answering, proc: { ...stopped, stoppedBy: null, signal: "SIGKILL" } }).verdict,
    ).toMatchObject({ status: "crashed", env_fault: false });
  });

  test("API errors: a 401 is an auth fault, an exhausted 500 a server error", () => {
    const auth = judge({
      agent: "pi",
      reduction: reduceGemini(read("c-errors.auth401")).reading,
      proc: { exitCode: 145, signal: null, stoppedBy: null, stderrTail: "" },
    }).verdict;
    expect(auth.fault?.kind).toBe("auth");
    expect(auth.env_fault).toBe(true);
    const server = judge({
      agent: "pi",
      reduction: reduceGemini(read("c-errors.server500")).reading,
      proc: { exitCode: 244, signal: null, stoppedBy: null, stderrTail: "" },
    }).verdict;
    expect(server.fault?.kind).toBe("server_error");
  });

  test("refused: a tool not offered in default mode, a write denied in plan mode", () => {
    expect(reduceGemini(read("d-permission.mode-default")).reading.refused).toEqual([
      { kind: "permission", subject: "run_shell_command (not offered)" },
      { kind: "permission", subject: "write_file (not offered)" },
    ]);
    expect(reduceGemini(read("d-permission.mode-plan")).reading.refused).toEqual([
      { kind: "permission", subject: "run_shell_command (not offered)" },
      { kind: "permission", subject: "write_file (denied by policy)" },
    ]);
  });

  test("tokens: input excludes the cached part; the router's model is named too", () => {
    const pinned = reduceGemini(read("a-plain.pinned")).reading;
    expect(pinned.tokens).toEqual({ input: 1000, output: 7, cache_read: 200, cache_write: 0 });
    expect(pinned.model).toBe("gemini-2.5-flash");
    const auto = reduceGemini(read("a-plain.auto")).reading;
    expect(String(auto.summary.models).split(",").length).toBe(2);
  });

  test("a price gives a cost; without one it is null", () => {
    expect(reduceGemini(read("a-plain.pinned"), { price: { input: 1, output: 4 } }).reading.costMicroUsd).toBe(1000 + 200 + 28);
  });

  test("progress: started, the first text, tools by name with their path", () => {
    const { events } = reduceGemini(read("b-tools.yolo"));
    expect(events[0]?.kind).toBe("started");
    expect(events.find((e) => e.kind === "tool_started")).toEqual({ kind: "tool_started", tool: "read_file", detail: "notes.txt" });
    expect(events.filter((e) => e.kind === "tool_failed").map((e) => e.tool)).toEqual(["no_such_tool"]);
  });
});
