import { describe, expect, test } from "bun:test";
import { lines, reduceClaude } from "./helpers.ts";

const init = { type: "system", subtype: "init", session_id: "s-1", model: "claude-x" };
const text = (t: string) => ({ type: "assistant", message: { content: [{ type: "text", text: t }] } });
const toolUse = (id: string, name: string, input: unknown) => ({
  type: "assistant",
  message: { content: [{ type: "tool_use", id, name, input }] },
});
const toolResult = (id: string, content: string, isError = false) => ({
  type: "user",
  message: { content: [{ type: "tool_result", tool_use_id: id, content, is_error: isError }] },
});
const result = (extra: Record<string, unknown> = {}) => ({
  type: "result",
  subtype: "success",
  is_error: false,
  result: "final",
  num_turns: 2,
  duration_ms: 100,
  total_cost_usd: 0.052195000000000005,
  usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 3, cache_creation_input_tokens: 2 },
  stop_reason: "end_turn",
  terminal_reason: "completed",
  ...extra,
});

describe("ClaudeReducer: results", () => {
  test("a successful stream gives the result text, cost in micro-USD and tokens from the result only", () => {
    const { reduction } = reduceClaude(lines(init, text("hi"), result()));
    expect(reduction.failure).toBeNull();
    expect(reduction.text).toBe("final");
    expect(reduction.costMicroUsd).toBe(52195);
    expect(reduction.tokens).toEqual({ input: 10, output: 5, cache_read: 3, cache_write: 2 });
    expect(reduction.sessionId).toBe("s-1");
    expect(reduction.summary.model).toBe("claude-x");
    expect(reduction.stopReason).toBe("end_turn");
  });

  test("tokens come from modelUsage summed over models (side calls included) when the result has it", () => {
    const modelUsage = {
      "claude-main": { inputTokens: 100, outputTokens: 50, cacheReadInputTokens: 4000, cacheCreationInputTokens: 10, costUSD: 0.05 },
      "claude-haiku": { inputTokens: 30, outputTokens: 5, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUSD: 0.001 },
    };
    const { reduction } = reduceClaude(lines(init, result({ modelUsage })));
    expect(reduction.tokens).toEqual({ input: 130, output: 55, cache_read: 4000, cache_write: 10 });
    // An API failure's modelUsage is {}: usage it is.
    expect(reduceClaude(lines(init, result({ modelUsage: {} }))).reduction.tokens).toEqual({
      input: 10,
      output: 5,
      cache_read: 3,
      cache_write: 2,
    });
  });

  test("two sessions in one stream: cost summed per session, the last session's id, tokens of both", () => {
    const second = { ...init, session_id: "s-2" };
    const mu = (n: number) => ({ m: { inputTokens: n, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 } });
    const stream = lines(
      init,
      result({ total_cost_usd: 0.01, modelUsage: mu(10), session_id: "s-1" }),
      second,
      result({ total_cost_usd: 0.002, modelUsage: mu(20), session_id: "s-2" }),
    );
    const { reduction } = reduceClaude(stream);
    expect(reduction.sessionId).toBe("s-2");
    expect(reduction.costMicroUsd).toBe(12000);
    expect(reduction.tokens).toEqual({ input: 30, output: 2, cache_read: 0, cache_write: 0 });
    expect(reduction.summary.sessions).toBe(2);
  });

  test("failure kinds: an API failure is provider_error, claude's own limits are turn_limit / budget_limit, other own errors agent_error", () => {
    expect(
      reduceClaude(lines(init, result({ is_error: true, result: "API Error: 500", api_error_status: 500 }))).reduction.failure?.kind,
    ).toBe("provider_error");
    expect(reduceClaude(lines(init, result({ subtype: "error_max_turns", is_error: true, errors: ["max"] }))).reduction.failure?.kind).toBe(
      "turn_limit",
    );
    expect(
      reduceClaude(lines(init, result({ subtype: "error_max_budget_usd", is_error: true, errors: ["budget"] }))).reduction.failure?.kind,
    ).toBe("budget_limit");
    expect(
      reduceClaude(lines(init, result({ subtype: "error_during_execution", is_error: true, errors: ["boom"] }))).reduction.failure?.kind,
    ).toBe("agent_error");
    expect(reduceClaude(lines(init, "{oops", result())).reduction.failure?.kind).toBe("protocol");
  });

  test("a retry not yet answered is pending; an answer after it clears it", () => {
    const retry = { type: "system", subtype: "api_retry", attempt: 1, max_retries: 10, error: "rate_limit", error_status: 429 };
    expect(reduceClaude(lines(init, retry)).reduction.pendingRetryError).toBe("rate_limit");
    expect(reduceClaude(lines(init, retry, text("ok"))).reduction.pendingRetryError).toBeNull();
  });

  test("is_error comes first: subtype success with is_error true is a failure naming the API status", () => {
    const { reduction } = reduceClaude(lines(init, result({ is_error: true, result: "API Error: 500 boom", api_error_status: 500 })));
    expect(reduction.text).toBeNull();
    expect(reduction.failure?.message).toContain("api_error_status 500");
    expect(reduction.failure?.message).toContain("API Error: 500 boom");
  });

  test("error subtypes carry errors[] as the reason", () => {
    for (const subtype of ["error_during_execution", "error_max_turns", "error_max_budget_usd"]) {
      const { reduction } = reduceClaude(lines(init, { type: "result", subtype, is_error: true, errors: [`why ${subtype}`] }));
      expect(reduction.failure?.message).toContain(`subtype ${subtype}`);
      expect(reduction.failure?.message).toContain(`why ${subtype}`);
    }
    const { reduction } = reduceClaude(
      lines(init, { type: "result", subtype: "error_max_turns", is_error: false, errors: ["Reached max"] }),
    );
    expect(reduction.failure?.message).toBe("claude: the run did not succeed (subtype error_max_turns): Reached max");
  });

  test("a result without boolean is_error or without string result is a protocol violation", () => {
    expect(reduceClaude(lines(init, result({ is_error: "no" }))).reduction.failure?.message).toContain("no boolean 'is_error'");
    expect(reduceClaude(lines(init, result({ result: 42 }))).reduction.failure?.message).toContain("no string 'result'");
  });

  test("a missing or unreadable cost is left out, never 0", () => {
    expect(reduceClaude(lines(init, result({ total_cost_usd: undefined }))).reduction.costMicroUsd).toBeNull();
    expect(reduceClaude(lines(init, result({ total_cost_usd: "1.0" }))).reduction.costMicroUsd).toBeNull();
    expect(reduceClaude(lines(init, result({ total_cost_usd: -1 }))).reduction.costMicroUsd).toBeNull();
    expect(reduceClaude(lines(init, result({ total_cost_usd: 0 }))).reduction.costMicroUsd).toBe(0);
  });

  test("assistant usage is never summed; a result without usage makes tokens unknown", () => {
    const withUsage = {
      type: "assistant",
      message: { content: [{ type: "text", text: "x" }], usage: { input_tokens: 999, output_tokens: 1 } },
    };
    expect(reduceClaude(lines(init, withUsage, withUsage, result())).reduction.tokens?.input).toBe(10);
    expect(reduceClaude(lines(init, result({ usage: undefined }))).reduction.tokens).toBeNull();
  });
});

describe("ClaudeReducer: turns", () => {
  test("the n-th result closes the n-th turn; per-turn counts are summed, cost is the last", () => {
    const { reduction } = reduceClaude(
      lines(
        init,
        text("a"),
        result({ num_turns: 2, total_cost_usd: 0.01 }),
        init,
        text("b"),
        result({ num_turns: 3, result: "second", total_cost_usd: 0.02 }),
      ),
    );
    expect(reduction.text).toBe("second");
    expect(reduction.summary.results).toBe(2);
    expect(reduction.summary.num_turns).toBe(5);
    expect(reduction.summary.duration_ms).toBe(200);
    expect(reduction.costMicroUsd).toBe(20000);
    expect(reduction.tokens?.input).toBe(20);
  });

  test("a count one result lacks is left out of the sum", () => {
    const { reduction } = reduceClaude(lines(init, result(), init, result({ duration_ms: undefined })));
    expect(reduction.summary.num_turns).toBe(4);
    expect("duration_ms" in reduction.summary).toBe(false);
  });

  test("an assistant record after a closed turn opens a new one that needs its own result", () => {
    const { reduction } = reduceClaude(lines(init, result(), text("more")));
    expect(reduction.failure).toEqual({
      kind: "no_result",
      message: "claude: no result record: exited inside a turn that has no result event",
    });
    expect(reduction.finished).toBe(false);
  });

  test("records after the last result that open no turn are counted and ignored", () => {
    const { reduction } = reduceClaude(lines(init, result(), { type: "system", subtype: "hook_response" }, { type: "rate_limit_event" }));
    expect(reduction.failure).toBeNull();
    expect(reduction.summary.records_after_result).toBe(2);
  });

  test("hook records may come before system/init without opening a second turn", () => {
    const { reduction } = reduceClaude(lines({ type: "system", subtype: "hook_started" }, init, result()));
    expect(reduction.failure).toBeNull();
    expect(reduction.summary.results).toBe(1);
  });

  test("a result outside a turn is a protocol violation", () => {
    const { reduction } = reduceClaude(lines(init, result(), result()));
    expect(reduction.failure?.message).toContain("a result event outside a turn");
  });
});

describe("ClaudeReducer: protocol failures", () => {
  test.each([
    ["not JSON", "{oops", "a stdout line is not JSON"],
    ["an array", "[1,2]", "not a JSON object with a 'type'"],
    ["no type", '{"x":1}', "not a JSON object with a 'type'"],
    ["a number type", '{"type":3}', "not a JSON object with a 'type'"],
  ])("%s", (_name, line, reason) => {
    expect(reduceClaude(lines(init, line, result())).reduction.failure?.message).toContain(reason);
  });

  test("no result at all", () => {
    expect(reduceClaude(lines(init, text("x"))).reduction.failure).toEqual({
      kind: "no_result",
      message: "claude: no result record: exited without a result event",
    });
  });

  test("an oversize result line fails the stream and the reason says lines were skipped", () => {
    const big = JSON.stringify(result({ result: "x".repeat(500) }));
    const { reduction } = reduceClaude(lines(init, big), { max: 256 });
    expect(reduction.failure?.message).toContain("1 line(s) past the per-line bound were skipped");
    expect(reduction.summary.oversize_records).toBe(1);
  });

  test("an oversize tool result is counted and skipped; the run still succeeds", () => {
    const { reduction } = reduceClaude(
      lines(init, toolUse("t1", "Read", { file_path: "/w/a" }), toolResult("t1", "y".repeat(900)), result()),
      { max: 600 },
    );
    expect(reduction.failure).toBeNull();
    expect(reduction.summary.oversize_records).toBe(1);
  });

  test("an unparsable unterminated tail without a result says no result first, then the tail", () => {
    const { reduction } = reduceClaude(`${lines(init, text("x"))}{"type":"result"`);
    expect(reduction.failure?.kind).toBe("no_result");
    expect(reduction.failure?.message).toBe(
      "claude: no result record: exited without a result event; the last line has no LF and is not a whole record (16 characters)",
    );
  });

  test("an unterminated last line that is a whole record is accepted and counted", () => {
    const whole = lines(init, text("x")) + JSON.stringify(result());
    const { reduction } = reduceClaude(whole);
    expect(reduction.failure).toBeNull();
    expect(reduction.finished).toBe(true);
    expect(reduction.summary.unterminated_last_line).toBe(true);
  });

  test("an unparsable tail after the result is a protocol violation; blank lines are skipped", () => {
    const { reduction } = reduceClaude(`${lines(init, "", result(), "  ")}{"x`);
    expect(reduction.failure?.kind).toBe("protocol");
    expect(reduction.failure?.message).toContain("the last line has no LF and is not a whole record");
    expect(reduction.summary.blank_lines).toBe(2);
  });

  test("deep nesting and huge integers do not escape as exceptions", () => {
    const deep = `${"[".repeat(100_000)}${"]".repeat(100_000)}`;
    expect(reduceClaude(lines(init, deep, result())).reduction.failure?.message).toContain("protocol violation");
    const huge = `{"type":"result","subtype":"success","is_error":false,"result":"ok","num_turns":${"9".repeat(400)}}`;
    const { reduction } = reduceClaude(lines(init, huge));
    expect(reduction.text).toBe("ok");
    expect("num_turns" in reduction.summary).toBe(false);
  });
});

describe("ClaudeReducer: progress and redaction", () => {
  test("tools show one allow-listed input; Bash shows its description, never its command", () => {
    const { events, reduction } = reduceClaude(
      lines(
        init,
        toolUse("t1", "Read", { file_path: "/work/proj/src/a.ts" }),
        toolResult("t1", "secret file contents"),
        toolUse("t2", "Bash", { command: "curl -H 'Authorization: sk-SECRET' x", description: "Fetch \u001b[31mthe\u001b[0m page" }),
        toolResult("t2", "TOKEN=abc", true),
        toolUse("t3", "Grep", { pattern: "TODO", path: "/etc" }),
        toolResult("t3", "hits"),
        toolUse("t4", "WebFetch", { url: "https://x?key=SECRET" }),
        toolResult("t4", "page"),
        { type: "assistant", message: { content: [{ type: "thinking", thinking: "private thoughts" }] } },
        { type: "system", subtype: "thinking_tokens", estimated_tokens: 77 },
        text("assistant words"),
        { type: "system", subtype: "api_retry", attempt: 2, max_retries: 10, error: "server_error" },
        result(),
      ),
      { cwd: "/work/proj" },
    );
    const printed = JSON.stringify(events);
    for (const secret of ["sk-SECRET", "TOKEN=abc", "secret file contents", "private thoughts", "assistant words", "key=SECRET", "curl"]) {
      expect(printed).not.toContain(secret);
    }
    expect(events).toContainEqual({ kind: "started", detail: "claude-x" });
    expect(events).toContainEqual({ kind: "tool_started", tool: "Read", detail: "src/a.ts" });
    expect(events).toContainEqual({ kind: "tool_started", tool: "Bash", detail: "Fetch the page" });
    expect(events).toContainEqual({ kind: "tool_started", tool: "Grep", detail: "TODO" });
    expect(events).toContainEqual({ kind: "tool_started", tool: "WebFetch", detail: "" });
    expect(events).toContainEqual({ kind: "tool_failed", tool: "Bash" });
    expect(events).toContainEqual(expect.objectContaining({ kind: "thinking", thinking_tokens: 77 }));
    expect(events).toContainEqual({ kind: "provider_retry", detail: "attempt 2 of 10" });
    expect(events).toContainEqual({ kind: "assistant_text" });
    expect(reduction.summary.tool_calls).toBe(4);
    expect(reduction.summary.tool_errors).toBe(1);
    expect(reduction.summary.api_retries).toBe(1);
  });

  test("strings are bounded", () => {
    const { events } = reduceClaude(lines(init, toolUse("t1", "Grep", { pattern: "p".repeat(10_000) }), result()));
    const started = events.find((e) => e.kind === "tool_started");
    expect(started?.detail?.length).toBeLessThanOrEqual(120);
  });
});

describe("ClaudeReducer: refused requests", () => {
  test("permission denials once per tool_use_id, with the allow-listed input only", () => {
    const denial = { tool_name: "Bash", tool_use_id: "t9", tool_input: { command: "rm -rf / # sk-SECRET", description: "Remove things" } };
    const { reduction } = reduceClaude(
      lines(
        init,
        { type: "system", subtype: "permission_denied", tool_name: "Bash", tool_use_id: "t9" },
        result({ permission_denials: [denial, denial] }),
      ),
    );
    expect(reduction.refused).toEqual([{ kind: "permission", subject: "Bash" }]);
    expect(reduction.summary.refused_requests).toBe(1);
    const only = reduceClaude(lines(init, result({ permission_denials: [denial] }))).reduction;
    expect(only.refused).toEqual([{ kind: "permission", subject: "Bash: Remove things" }]);
  });

  test("an AskUserQuestion error result is a refused question", () => {
    const { reduction } = reduceClaude(
      lines(
        init,
        toolUse("q1", "AskUserQuestion", { questions: [{ question: "private?" }] }),
        toolResult("q1", "No such tool", true),
        result(),
      ),
    );
    expect(reduction.refused).toEqual([{ kind: "question", subject: "AskUserQuestion" }]);
    expect(JSON.stringify(reduction)).not.toContain("private?");
  });
});

describe("ClaudeReducer: loop observer", () => {
  test("reports each completed tool call as name + digests, retries, and assistant records", () => {
    const actions: string[] = [];
    let retries = 0;
    const turns: (string | undefined)[] = [];
    const loop = { action: (_n: string, f: string) => actions.push(f), retry: () => retries++, turn: (d?: string) => turns.push(d) };
    reduceClaude(
      lines(
        init,
        toolUse("a", "Read", { file_path: "x" }),
        toolResult("a", "same"),
        toolUse("b", "Read", { file_path: "x" }),
        toolResult("b", "same"),
        toolUse("c", "Read", { file_path: "y" }),
        toolResult("c", "same"),
        { type: "system", subtype: "api_retry", attempt: 1 },
        text("t"),
        result(),
      ),
      { loop },
    );
    expect(actions.length).toBe(3);
    expect(actions[0]).toBe(actions[1]);
    expect(actions[2]).not.toBe(actions[0]);
    expect(actions[0]?.startsWith("Read:")).toBe(true);
    expect(actions.join()).not.toContain("same");
    expect(retries).toBe(1);
    expect(turns.length).toBe(4);
    expect(turns[3]).toBeString();
  });
});
