// The opencode reducer on every stream captured from real opencode 1.18.33
// (../shared/fixtures/opencode, copied into test/fixtures/opencode): each
// capture's reduction is checked against what its own records say, then the
// cases the sheet singles out (no terminal record, an auto-rejected
// permission, the cut-stream loop, per-step tokens and cost).
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LineFramer } from "../src/core/frame.ts";
import { LoopDetector, type LoopVerdict } from "../src/core/loop-detector.ts";
import { CUT_STEP, OpencodeReducer, type OpencodeReducerOptions } from "../src/core/opencode/reducer.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import { bare, ROOT } from "./helpers.ts";

const DIR = join(ROOT, "test", "fixtures", "opencode");
const CAPTURES = readdirSync(DIR)
  .filter((f) => f.endsWith(".jsonl"))
  .map((f) => f.slice(0, -".jsonl".length));

const read = (name: string) => readFileSync(join(DIR, `${name}.jsonl`), "utf8");
const exitOf = (name: string) => Number(readFileSync(join(DIR, `${name}.exit.txt`), "utf8").trim());

function reduceOpencode(text: string, options: OpencodeReducerOptions = {}) {
  const events: ProgressEvent[] = [];
  const reducer = new OpencodeReducer({ ...options, emit: (e) => events.push(bare(e)) });
  const framer = new LineFramer(reducer);
  framer.push(new TextEncoder().encode(text));
  framer.end();
  reducer.streamEnded();
  return { reading: reducer.reduction(), events };
}

/** The records of a JSONL capture, or null when it is not JSONL of typed records. */
function records(text: string): any[] | null {
  const out: any[] = [];
  for (const line of text.split("\n").filter((l) => l.trim())) {
    try {
      const value = JSON.parse(line);
      if (typeof value?.type !== "string") return null;
      out.push(value);
    } catch {
      return null;
    }
  }
  return out;
}

// One step of the cut-stream loop as captured (step_start, the cut text, step_finish unknown), and without its text.
const TRUNCATED = readFileSync(join(DIR, "c-errors.truncated.jsonl"), "utf8").split("\n");
const CUT_WITH_TEXT = TRUNCATED.slice(0, 3).join("\n") + "\n";
const CUT = [TRUNCATED[0], TRUNCATED[2]].join("\n") + "\n";

const rejected = (r: any) =>
  r.type === "tool_use" && (r.part.tool === "invalid" || String(r.part.state?.error ?? "").startsWith("The user rejected permission"));

describe("the opencode reducer on every capture", () => {
  test("there are captures", () => {
    expect(CAPTURES.length).toBeGreaterThan(40);
  });
  for (const name of CAPTURES) {
    test(name, () => {
      const stdout = read(name);
      const { reading } = reduceOpencode(stdout);
      const recs = records(stdout);
      expect(reading.model).toBeNull();
      expect(reading.pendingRetryError).toBeNull();
      if (recs === null) {
        // The default format, --version, export, session list: no run json to read.
        expect(reading.failure?.kind).toBe("protocol");
        expect(reading.text).toBeNull();
        return;
      }
      if (recs.length === 0) {
        expect(reading.failure?.message).toBe("opencode: exited without a record");
        expect(reading.sessionId).toBeNull();
        return;
      }
      expect(reading.sessionId).toBe(recs[0].sessionID);
      expect(reading.sessionId).toStartWith("ses_");
      const finishes = recs.filter((r) => r.type === "step_finish");
      const sum = (f: (r: any) => number) => finishes.reduce((n, r) => n + f(r), 0);
      if (finishes.length > 0) {
        expect(reading.tokens).toEqual({
          input: sum((r) => r.part.tokens.input),
          output: sum((r) => r.part.tokens.output + r.part.tokens.reasoning),
          cache_read: sum((r) => r.part.tokens.cache.read),
          cache_write: sum((r) => r.part.tokens.cache.write),
        });
        expect(reading.costMicroUsd).toBe(Math.round(sum((r) => r.part.cost) * 1e6));
      } else {
        expect(reading.tokens).toBeNull();
      }
      expect(reading.toolCalls).toBe(recs.filter((r) => r.type === "tool_use").length);
      expect(reading.refused.length).toBe(recs.filter(rejected).length);
      const last = recs[recs.length - 1];
      const error = recs.find((r) => r.type === "error");
      if (error !== undefined) {
        expect(exitOf(name)).toBe(1);
        expect(reading.finished).toBe(true);
        expect(reading.failure?.kind).toBe(error.error.name === "APIError" ? "provider_error" : "agent_error");
        expect(reading.failure?.message).toContain(error.error.data.message.slice(0, 40));
        expect(reading.summary.api_error_status ?? null).toBe(error.error.data.statusCode ?? null);
        expect(reading.text).toBeNull();
      } else if (last.type === "step_finish" && last.part.reason === "stop") {
        expect(reading.finished).toBe(true);
        expect(reading.failure).toBeNull();
        expect(reading.stopReason).toBe("stop");
        const texts = recs.filter((r) => r.type === "text");
        expect(reading.text).toBe(texts[texts.length - 1].part.text);
      } else {
        // No final step: killed mid-step, a cut stream, or a tool call opencode ended the run after.
        expect(reading.finished).toBe(false);
        expect(reading.failure).not.toBeNull();
        expect(reading.text).toBeNull();
      }
    });
  }
});

describe("the cases the sheet singles out", () => {
  test("a plain run: the last text, tokens net of the cache, reasoning billed as output, opencode's own cost", () => {
    const { reading, events } = reduceOpencode(read("a-plain.plain"));
    expect(reading.text).toBe("Hello from the stand-in.");
    expect(reading.tokens).toEqual({ input: 1000, output: 7, cache_read: 200, cache_write: 0 });
    expect(reading.costMicroUsd).toBe(1014);
    expect(reading.summary.reasoning_tokens).toBe(2);
    expect(events[0]).toEqual({ kind: "started" });
  });

  test("the session id is bound once, from the first record", () => {
    const seen: string[] = [];
    reduceOpencode(read("b-tools.tools"), { onSession: (id) => seen.push(id) });
    expect(seen).toEqual(["ses_dcfa421c5ffeV6KZdRIKvCYzmV"]);
  });

  test("tools: tokens summed over every step; a call to a tool not offered is a refusal", () => {
    const { reading } = reduceOpencode(read("b-tools.tools"));
    expect(reading.finished).toBe(true);
    expect(reading.summary.steps).toBe(5);
    expect(reading.refused).toEqual([{ kind: "permission", subject: "no_such_tool (not offered)" }]);
  });

  test("an auto-rejected permission right before exit 0 is not a success", () => {
    expect(exitOf("d-permission.ask")).toBe(0);
    const { reading } = reduceOpencode(read("d-permission.ask"));
    expect(reading.finished).toBe(false);
    expect(reading.failure).toEqual({
      kind: "agent_error",
      message: "opencode: a permission was auto-rejected and the run ended without an answer",
    });
    expect(reading.refused).toEqual([{ kind: "permission", subject: "bash (auto-rejected)" }]);
    expect(reading.stopReason).toBe("tool-calls");
  });

  test("a denied tool then a rejected write: both refusals named", () => {
    const { reading } = reduceOpencode(read("d-permission.deny"));
    expect(reading.refused).toEqual([
      { kind: "permission", subject: "bash (not offered)" },
      { kind: "permission", subject: "write (auto-rejected)" },
    ]);
    expect(reading.failure?.kind).toBe("agent_error");
  });

  test("--auto: the asks approved, the run ends on stop: a success", () => {
    const { reading } = reduceOpencode(read("d-permission.auto"));
    expect(reading.failure).toBeNull();
    expect(reading.text).toBe("Done.");
  });

  test("the cut stream: consecutive unknown finishes are the same action to the loop observer", () => {
    const { reading } = reduceOpencode(read("c-errors.truncated"));
    expect(reading.cutSteps).toBe(4);
    expect(reading.failure).toEqual({
      kind: "provider_error",
      message: "opencode: the model's stream was cut before its finish reason (4 steps in a row)",
    });
    // The loop as it goes on: the capture's step, six times over. Its cut text repeats too (the text rule).
    const loops: LoopVerdict[] = [];
    reduceOpencode(CUT_WITH_TEXT.repeat(6), { loop: new LoopDetector({ onLoop: (v) => loops.push(v) }) });
    expect(loops.length).toBe(1);
    // A stream cut before any text: the unknown finishes alone are the loop (the repeat rule).
    const bare: LoopVerdict[] = [];
    reduceOpencode(CUT.repeat(6), { loop: new LoopDetector({ onLoop: (v) => bare.push(v) }) });
    expect(bare.map((v) => [v.kind, v.tool, v.count])).toEqual([["repeat", CUT_STEP, 5]]);
  });

  test("a tool call between cut steps breaks the streak", () => {
    const tool = read("b-tools.tools")
      .split("\n")
      .find((l) => l.includes('"tool_use"'))!;
    const loops: LoopVerdict[] = [];
    const { reading } = reduceOpencode(CUT + CUT + CUT + `${tool}\n` + CUT + CUT, {
      loop: new LoopDetector({ onLoop: (v) => loops.push(v) }),
    });
    expect(loops).toEqual([]);
    expect(reading.cutSteps).toBe(2);
    expect(reading.summary.cut_steps).toBe(5);
  });

  test("killed after step_start (hang, signals): no result", () => {
    for (const name of ["c-errors.hang", "h-signals.sigterm-tool", "h-signals.sigint-model"]) {
      const { reading } = reduceOpencode(read(name));
      expect(reading.failure).toEqual({ kind: "no_result", message: "opencode: exited in the middle of a step" });
    }
  });

  test("a step that starts after a stop reopens the run", () => {
    const plain = read("a-plain.plain");
    const reducer = new OpencodeReducer();
    const framer = new LineFramer(reducer);
    framer.push(new TextEncoder().encode(plain + plain.split("\n")[0] + "\n"));
    expect(reducer.finished()).toBe(false);
    framer.push(new TextEncoder().encode(plain.split("\n").slice(1).join("\n")));
    framer.end();
    expect(reducer.finished()).toBe(true);
  });

  test("without opencode's cost the user's price is used; with it, never", () => {
    const plain = read("a-plain.plain").replace(/,"cost":[0-9.]+/g, "");
    expect(reduceOpencode(plain, { price: { input: 2, output: 4 } }).reading.costMicroUsd).toBe(1000 * 2 + 7 * 4 + 200 * 2);
    expect(reduceOpencode(plain).reading.costMicroUsd).toBeNull();
    expect(reduceOpencode(read("a-plain.plain"), { price: { input: 2, output: 4 } }).reading.costMicroUsd).toBe(1014);
  });

  test("a line that is not a record is a protocol violation", () => {
    const { reading } = reduceOpencode(read("a-plain.plain") + "not json\n");
    expect(reading.failure?.kind).toBe("protocol");
  });
});
