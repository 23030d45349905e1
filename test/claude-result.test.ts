// One claude `result` record read on its own (src/core/claude/result.ts): the order of the checks and the failure kind each case gets.
import { describe, expect, test } from "bun:test";
import type { ClaudeResult } from "../src/core/claude/events.ts";
import type { FailureKind } from "../src/core/failure.ts";
import { readResult } from "../src/core/claude/result.ts";

const base: ClaudeResult = {
  type: "result",
  subtype: "success",
  is_error: false,
  result: "done",
  stop_reason: "end_turn",
  terminal_reason: "completed",
};

describe("a claude result record, read on its own", () => {
  test("success with a string result is the answer; the facts keep subtype, is_error and both reasons", () => {
    const r = readResult(base);
    expect(r.outcome).toEqual({ kind: "answer", text: "done" });
    expect(r.facts).toEqual({ result_subtype: "success", is_error: false, terminal_reason: "completed", stop_reason: "end_turn" });
    expect(r.stopReason).toBe("end_turn");
    expect(r.apiStatus).toBeUndefined();
  });

  const failures: [string, Partial<ClaudeResult>, FailureKind, RegExp][] = [
    [
      "an API failure keeps subtype success: is_error decides first",
      { is_error: true, result: "API Error: 529 overloaded" },
      "provider_error",
      /ended in an error \(subtype success, terminal_reason completed\): API Error: 529/,
    ],
    [
      "an api_error_status makes any error a provider's",
      { is_error: true, subtype: "error_during_execution", api_error_status: 401, result: "" },
      "provider_error",
      /api_error_status 401/,
    ],
    [
      "--max-turns ends as claude's own limit",
      { is_error: true, subtype: "error_max_turns", result: undefined, errors: ["too many turns"] },
      "turn_limit",
      /subtype error_max_turns.*: too many turns/,
    ],
    [
      "--max-budget-usd ends as claude's own limit",
      { is_error: true, subtype: "error_max_budget_usd" },
      "budget_limit",
      /error_max_budget_usd/,
    ],
    ["an unknown error subtype is the agent's error", { is_error: true, subtype: "error_new_kind" }, "agent_error", /error_new_kind/],
    [
      "not an error, but not success either: its errors[] are the reason",
      { subtype: "error_during_execution", errors: ["a", 7, "b"] },
      "agent_error",
      /did not succeed \(subtype error_during_execution\): a; b$/,
    ],
  ];
  for (const [name, extra, kind, reason] of failures) {
    test(name, () => {
      const { outcome } = readResult({ ...base, ...extra });
      expect(outcome.kind).toBe("failed");
      if (outcome.kind !== "failed") return;
      expect(outcome.failure).toBe(kind);
      expect(outcome.reason).toMatch(reason);
    });
  }

  test("a result without a boolean is_error, or a success without a string result, is a protocol violation", () => {
    expect(readResult({ ...base, is_error: "no" }).outcome).toEqual({
      kind: "protocol",
      what: "the result event has no boolean 'is_error'",
    });
    expect(readResult({ ...base, result: 42 }).outcome).toEqual({ kind: "protocol", what: "the result event has no string 'result'" });
  });

  test("api_error_status is kept apart (the summary adds it after the denials)", () => {
    expect(readResult({ ...base, is_error: true, api_error_status: 429 }).apiStatus).toBe(429);
    expect(readResult({ ...base, api_error_status: "x" }).apiStatus).toBeUndefined();
  });
});
