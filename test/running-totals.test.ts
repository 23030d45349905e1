// Every progress event carries the run's totals so far (tokens and cost, null
// while unknown), one shape for every agent, from the figures its reducer keeps
// for the budget guard: so the last event of a stream says what its verdict says.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { LineFramer } from "../src/core/frame.ts";
import { progressRecord, type ProgressEvent, type ProgressSink } from "../src/core/progress.ts";
import type { Reducer } from "../src/core/reduction.ts";
import { ClaudeReducer } from "../src/core/claude/reducer.ts";
import { PiReducer } from "../src/core/pi/reducer.ts";
import { CodexReducer } from "../src/core/codex/reducer.ts";
import { GeminiReducer } from "../src/core/gemini/reducer.ts";
import { OpencodeReducer } from "../src/core/opencode/reducer.ts";
import { lines, ROOT } from "./helpers.ts";

// USD per million tokens: codex and gemini say no cost, so theirs is priced.
const PRICE = { input: 1, output: 2 };
const REDUCERS: Record<string, (emit: ProgressSink) => Reducer> = {
  claude: (emit) => new ClaudeReducer({ emit }),
  pi: (emit) => new PiReducer({ emit }),
  codex: (emit) => new CodexReducer({ emit, price: PRICE }),
  gemini: (emit) => new GeminiReducer({ emit, price: PRICE }),
  opencode: (emit) => new OpencodeReducer({ emit, price: PRICE }),
};

function reduce(agent: string, text: string) {
  const events: ProgressEvent[] = [];
  const reducer = REDUCERS[agent]!((e) => events.push(e));
  const framer = new LineFramer(reducer);
  framer.push(new TextEncoder().encode(text));
  framer.end();
  reducer.streamEnded();
  return { events, reduction: reducer.reduction() };
}

const fixture = (agent: string, name: string) => readFileSync(join(ROOT, "test", "fixtures", agent, `${name}.jsonl`), "utf8");
const captures = (agent: string) =>
  readdirSync(join(ROOT, "test", "fixtures", agent))
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => f.slice(0, -".jsonl".length));

describe.each(Object.keys(REDUCERS))("%s", (agent) => {
  test("every event of every captured stream has tokens and cost_micro_usd; the last has the verdict's", () => {
    let compared = 0;
    for (const name of captures(agent)) {
      const { events, reduction } = reduce(agent, fixture(agent, name));
      for (const e of events) {
        expect(Object.hasOwn(e, "tokens") && Object.hasOwn(e, "cost_micro_usd")).toBe(true);
      }
      if (events.length === 0) continue;
      expect({ name, tokens: events.at(-1)!.tokens, cost: events.at(-1)!.cost_micro_usd }).toEqual({
        name,
        tokens: reduction.tokens,
        cost: reduction.costMicroUsd,
      });
      if (reduction.tokens !== null) compared += 1;
    }
    expect(compared).toBeGreaterThan(3);
  });
});

const known = (events: ProgressEvent[]) => events.filter((e) => e.tokens != null);

test("a record takes the event's allow-listed fields and nothing else", () => {
  const event = {
    kind: "tool_started",
    tool: "Read",
    detail: "a.ts",
    tokens: null,
    cost_micro_usd: 7,
    command: "cat secret",
  } as ProgressEvent;
  const record = progressRecord(event, { sessionId: "s", agent: "claude" }, new Date(0));
  expect(record).toEqual({
    schema_version: 1,
    ts: "1970-01-01T00:00:00.000Z",
    session_id: "s",
    agent: "claude",
    kind: "tool_started",
    tool: "Read",
    detail: "a.ts",
    tokens: null,
    cost_micro_usd: 7,
  });
});

test("claude: each assistant message's usage as it comes, the cost once a result has it", () => {
  const usage = (n: number) => ({ input_tokens: n, output_tokens: 1, cache_read_input_tokens: 10, cache_creation_input_tokens: 0 });
  const assistant = (id: string, n: number) => ({
    type: "assistant",
    message: { id, role: "assistant", content: [{ type: "text", text: "…" }], usage: usage(n) },
    session_id: "s",
  });
  const result = {
    type: "result",
    subtype: "success",
    is_error: false,
    result: "done",
    session_id: "s",
    total_cost_usd: 0.0123,
    usage: usage(300),
  };
  const { events } = reduce(
    "claude",
    lines(
      { type: "system", subtype: "init", session_id: "s", model: "m" },
      assistant("a", 100),
      assistant("a", 100),
      assistant("b", 150),
      result,
    ),
  );
  expect(events[0]).toMatchObject({
    kind: "started",
    tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
    cost_micro_usd: null,
  });
  // One API response's records share its id: counted once.
  expect(events.filter((e) => e.kind === "assistant_text").map((e) => e.tokens?.input)).toEqual([100, 100, 250]);
  expect(events.filter((e) => e.kind === "assistant_text").every((e) => e.cost_micro_usd === null)).toBe(true);
  expect(events.at(-1)).toMatchObject({ kind: "activity", tokens: { input: 300, output: 2, cache_read: 20 }, cost_micro_usd: 12_300 });
});

test("pi: the totals grow with each message_end, cost included", () => {
  const { events, reduction } = reduce("pi", fixture("pi", "b3-json-tool-two-calls"));
  const before = events.findIndex((e) => e.tokens != null);
  expect(before).toBeGreaterThan(0);
  expect(events[before - 1]).toMatchObject({ tokens: null, cost_micro_usd: null });
  const steps = new Set(known(events).map((e) => JSON.stringify([e.tokens, e.cost_micro_usd])));
  expect(steps.size).toBeGreaterThan(1);
  expect(known(events).at(0)!.cost_micro_usd).toBeGreaterThan(0);
  expect(known(events).at(0)!.tokens!.input).toBeLessThan(reduction.tokens!.input);
});

test("codex: turn.completed's usage, priced; opencode: step_finish's tokens and cost", () => {
  const codex = reduce("codex", fixture("codex", "a-plain.plain"));
  expect(codex.events[0]).toMatchObject({ kind: "started", tokens: null, cost_micro_usd: null });
  expect(codex.events.at(-1)!.tokens!.output).toBeGreaterThan(0);
  expect(codex.events.at(-1)!.cost_micro_usd).toBeGreaterThan(0);
  const opencode = reduce("opencode", fixture("opencode", "a-plain.plain"));
  expect(opencode.events[0]).toMatchObject({ kind: "started", tokens: null });
  expect(known(opencode.events).length).toBeGreaterThan(0);
});

test("gemini: known from the result's stats; unpriced, the cost stays null", () => {
  const name = captures("gemini").find((n) => reduce("gemini", fixture("gemini", n)).reduction.tokens !== null)!;
  const { events } = reduce("gemini", fixture("gemini", name));
  expect(events[0]).toMatchObject({ tokens: null, cost_micro_usd: null });
  expect(events.at(-1)!.tokens).not.toBeNull();
  const unpriced: ProgressEvent[] = [];
  const reducer = new GeminiReducer({ emit: (e) => unpriced.push(e) });
  const framer = new LineFramer(reducer);
  framer.push(new TextEncoder().encode(fixture("gemini", name)));
  framer.end();
  expect(unpriced.at(-1)).toMatchObject({ cost_micro_usd: null });
  expect(unpriced.at(-1)!.tokens).toEqual(events.at(-1)!.tokens!);
});
