// The pure supervision pieces: the loop detector, the token budget guard,
// the environment-fault classifier and the --grace wrap-up. No processes, no clocks: times are numbers.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { LoopDetector, type LoopVerdict } from "../src/core/loop-detector.ts";
import { actionFingerprint } from "../src/core/loop.ts";
import {
  BudgetFlagsSchema,
  BudgetGuard,
  BudgetOptionsSchema,
  DEFAULT_BUDGET_GRACE_MS,
  parseBudgetOptions,
  weightedTokens,
} from "../src/core/budget.ts";
import { classifyFault, evidence } from "../src/core/faults.ts";
import { FAULT_KINDS, FAULT_ROWS, type FaultKind } from "../src/core/fault-rows.ts";
import { redact } from "../src/core/redact.ts";
import { Supervisor } from "../src/core/supervisor.ts";
import type { Tokens } from "../src/core/verdict.ts";
import { lines, reduceClaude, ROOT } from "./helpers.ts";

const fp = (tool: string, input: string, result = "r") => actionFingerprint(tool, input, result);
const A = fp("Read", "a");
const B = fp("Bash", "b");

function feed(detector: LoopDetector, n: number, tool: string, fingerprint: string): void {
  for (let i = 0; i < n; i++) detector.action(tool, fingerprint);
}

describe("LoopDetector: the same call K times in a row", () => {
  test("trips at K = 5 by default, not at 4", () => {
    const d = new LoopDetector();
    feed(d, 4, "Read", A);
    expect(d.verdict()).toBeNull();
    d.action("Read", A);
    expect(d.verdict()).toEqual({ kind: "repeat", tool: "Read", count: 5, reason: "the same Read call 5 times in a row" });
  });

  test("a custom K trips at K, not at K − 1", () => {
    const d = new LoopDetector({ repeat: 3 });
    feed(d, 2, "Read", A);
    expect(d.verdict()).toBeNull();
    d.action("Read", A);
    expect(d.verdict()?.count).toBe(3);
  });

  test("a different call in between resets the streak", () => {
    const d = new LoopDetector();
    feed(d, 4, "Read", A);
    d.action("Bash", B);
    feed(d, 4, "Read", A);
    expect(d.verdict()).toBeNull();
    d.action("Read", A);
    expect(d.verdict()?.kind).toBe("repeat");
  });

  test("the same call with another result is progress, not a repeat", () => {
    const d = new LoopDetector();
    for (let i = 0; i < 10; i++) d.action("Bash", fp("Bash", "make", `output ${i}`));
    expect(d.verdict()).toBeNull();
  });

  test("retries neither reset nor count toward a streak", () => {
    const d = new LoopDetector();
    d.action("Read", A);
    d.action("Read", A);
    d.retry();
    d.action("Read", A);
    d.retry();
    d.retry();
    d.action("Read", A);
    expect(d.verdict()).toBeNull();
    d.retry();
    d.action("Read", A);
    expect(d.verdict()?.count).toBe(5);

    const retriesOnly = new LoopDetector();
    for (let i = 0; i < 50; i++) retriesOnly.retry();
    expect(retriesOnly.verdict()).toBeNull();
  });

  test("assistant turns between the calls (claude: one record per block) do not break the streak", () => {
    const d = new LoopDetector();
    for (let i = 0; i < 5; i++) {
      d.turn(`thought ${i}`);
      d.turn();
      d.action("Read", A);
    }
    expect(d.verdict()?.kind).toBe("repeat");
  });

  test("the tool name, never the input, is reported; it is cleaned to one short line", () => {
    const d = new LoopDetector();
    feed(d, 5, "Bash\u001b[31m\nrm -rf /", fp("Bash", "secret-input"));
    const v = d.verdict() as LoopVerdict;
    expect(v.tool).toBe("Bash rm -rf /");
    expect(v.reason).not.toContain("secret-input");
    expect(v.reason).not.toContain("\n");
  });

  test("thresholds below 2 are refused", () => {
    expect(() => new LoopDetector({ repeat: 1 })).toThrow(RangeError);
    expect(() => new LoopDetector({ pingPong: 0 })).toThrow(RangeError);
    expect(() => new LoopDetector({ textRepeat: 1.5 })).toThrow(RangeError);
  });
});

describe("LoopDetector: A-B ping-pong", () => {
  test("default: ceil(K/2) = 3 full cycles, so A-B-A-B-A-B trips and A-B-A-B-A does not", () => {
    const d = new LoopDetector();
    for (const [tool, f] of [
      ["Edit", A],
      ["Bash", B],
      ["Edit", A],
      ["Bash", B],
      ["Edit", A],
    ] as const)
      d.action(tool, f);
    expect(d.verdict()).toBeNull();
    d.action("Bash", B);
    expect(d.verdict()).toEqual({
      kind: "ping-pong",
      tool: "Edit, Bash",
      count: 3,
      reason: "Edit and Bash calls alternating 3 times (A-B ping-pong)",
    });
  });

  test("pingPong: N trips at N cycles, not at N − 1", () => {
    const d = new LoopDetector({ pingPong: 4 });
    for (let i = 0; i < 3; i++) {
      d.action("Read", A);
      d.action("Bash", B);
    }
    d.action("Read", A);
    expect(d.verdict()).toBeNull();
    d.action("Bash", B);
    expect(d.verdict()?.count).toBe(4);
  });

  test("two calls of one tool name the tool once", () => {
    const d = new LoopDetector();
    const x = fp("Read", "x");
    const y = fp("Read", "y");
    for (let i = 0; i < 3; i++) {
      d.action("Read", x);
      d.action("Read", y);
    }
    expect(d.verdict()).toMatchObject({ kind: "ping-pong", tool: "Read", reason: "two Read calls alternating 3 times (A-B ping-pong)" });
  });

  test("a third call breaks the alternation; a new pair starts over", () => {
    const d = new LoopDetector();
    const C = fp("Grep", "c");
    for (const f of [A, B, A, B, C, A, B, A, B]) d.action("T", f);
    expect(d.verdict()).toBeNull();
    d.action("T", A);
    d.action("T", B);
    expect(d.verdict()?.kind).toBe("ping-pong");
  });

  test("a doubled call breaks the alternation", () => {
    const d = new LoopDetector();
    for (const f of [A, B, A, A, B, A, B, A]) d.action("T", f);
    expect(d.verdict()).toBeNull();
  });

  test("retries inside a ping-pong change nothing", () => {
    const d = new LoopDetector();
    for (let i = 0; i < 3; i++) {
      d.action("Edit", A);
      d.retry();
      d.action("Bash", B);
      d.retry();
    }
    expect(d.verdict()?.kind).toBe("ping-pong");
  });
});

describe("LoopDetector: the same assistant text", () => {
  test("trips at textRepeat (default K = 5), not at 4", () => {
    const d = new LoopDetector();
    for (let i = 0; i < 4; i++) d.turn("d1");
    expect(d.verdict()).toBeNull();
    d.turn("d1");
    expect(d.verdict()).toEqual({ kind: "text", tool: "", count: 5, reason: "the same assistant text 5 times in a row" });
  });

  test("a custom textRepeat; a different text resets", () => {
    const d = new LoopDetector({ textRepeat: 3 });
    d.turn("d1");
    d.turn("d1");
    d.turn("d2");
    d.turn("d1");
    d.turn("d1");
    expect(d.verdict()).toBeNull();
    d.turn("d1");
    expect(d.verdict()?.count).toBe(3);
  });

  test("text-less turns, differing actions and retries in between do not break it", () => {
    const d = new LoopDetector();
    for (let i = 0; i < 5; i++) {
      d.turn("let me try again");
      d.turn();
      d.retry();
      d.action("Bash", fp("Bash", `attempt ${i}`));
    }
    expect(d.verdict()?.kind).toBe("text");
  });
});

describe("LoopDetector: the first detection sticks", () => {
  test("onLoop fires once; later patterns do not replace the verdict", () => {
    const seen: LoopVerdict[] = [];
    const d = new LoopDetector({ onLoop: (v) => seen.push(v) });
    feed(d, 5, "Read", A);
    feed(d, 20, "Read", A);
    for (let i = 0; i < 10; i++) {
      d.action("Edit", A);
      d.action("Bash", B);
      d.turn("same");
    }
    expect(seen).toHaveLength(1);
    expect(d.verdict()).toEqual(seen[0] as LoopVerdict);
    expect(d.verdict()?.kind).toBe("repeat");
    expect(d.size()).toBe(0);
  });
});

describe("LoopDetector: bounded memory", () => {
  test("100,000 distinct actions and texts: nothing trips, at most 3 values held, and it still works", () => {
    const d = new LoopDetector();
    let max = 0;
    for (let i = 0; i < 100_000; i++) {
      d.action("Read", fp("Read", `file-${i}`));
      if (i % 10 === 0) d.turn(`text-${i}`);
      if (i % 1000 === 0) max = Math.max(max, d.size());
    }
    expect(d.verdict()).toBeNull();
    expect(max).toBeLessThanOrEqual(3);
    expect(d.size()).toBeLessThanOrEqual(3);
    feed(d, 5, "Read", A);
    expect(d.verdict()?.kind).toBe("repeat");
  });
});

describe("LoopDetector behind the claude reducer", () => {
  const init = { type: "system", subtype: "init", session_id: "s-1", model: "claude-x" };
  const call = (id: string) => [
    { type: "assistant", message: { content: [{ type: "tool_use", id, name: "Read", input: { file_path: "/p/a.ts" } }] } },
    { type: "user", message: { content: [{ type: "tool_result", tool_use_id: id, content: "same text" }] } },
  ];
  const retry = {
    type: "system",
    subtype: "api_retry",
    attempt: 1,
    max_retries: 10,
    retry_delay_ms: 500,
    error_status: 529,
    error: "overloaded",
  };

  test("five identical Read calls (ids differ, retries between) are a repeat", () => {
    const d = new LoopDetector();
    const records: unknown[] = [init];
    for (let i = 0; i < 4; i++) records.push(...call(`t${i}`), retry);
    reduceClaude(lines(...records), { loop: d });
    expect(d.verdict()).toBeNull();
    const e = new LoopDetector();
    reduceClaude(lines(...records, ...call("t4")), { loop: e });
    expect(e.verdict()).toMatchObject({ kind: "repeat", tool: "Read", count: 5 });
  });

  test("a captured run that retried and recovered is no loop", () => {
    const d = new LoopDetector();
    reduceClaude(readFileSync(join(ROOT, "test", "fixtures", "claude", "c-errors.recover.jsonl"), "utf8"), { loop: d });
    expect(d.verdict()).toBeNull();
  });
});

// -- budget --------------------------------------------------------------------

const tokens = (input: number, output = 0, cache_read = 0, cache_write = 0): Tokens => ({ input, output, cache_read, cache_write });

describe("BudgetGuard: the weighted figure", () => {
  test("input + output + cache_write + W × cache_read, rounded down", () => {
    expect(weightedTokens(tokens(100, 50, 1000, 30))).toBe(280);
    expect(weightedTokens(tokens(100, 50, 1000, 30), 1)).toBe(1180);
    expect(weightedTokens(tokens(0, 0, 15, 0))).toBe(1); // 1.5 → 1
    expect(weightedTokens(tokens(0, 0, 100, 0), 0.57)).toBe(57); // not 56.99999999999999 → 56
    expect(weightedTokens(tokens(0, 0, 10, 0), 0.7)).toBe(7);
    expect(weightedTokens(tokens(0, 0, 1_000_000, 0), 0)).toBe(0);
  });

  test("the cache-read weight decides whether cached context counts", () => {
    const cheap = new BudgetGuard({ maxTokens: 1000, cacheReadWeight: 0.1 });
    const full = new BudgetGuard({ maxTokens: 1000, cacheReadWeight: 1 });
    const t = tokens(100, 0, 9000, 0);
    expect(cheap.weighted(t)).toBe(1000);
    expect(cheap.sample(t, 0)).toBeNull(); // at the cap is not over it
    expect(full.sample(t, 0)).toEqual({ kind: "warn", weighted: 9100, max: 1000 });
  });

  test("defaults: enforce, W 0.1, 240 s grace; a bad option is refused", () => {
    const g = new BudgetGuard({ maxTokens: 10 });
    expect(g.options).toEqual({ maxTokens: 10, mode: "enforce", cacheReadWeight: 0.1, graceMs: 240_000 });
    expect(() => new BudgetGuard({ maxTokens: 0 })).toThrow();
    expect(() => new BudgetGuard({ maxTokens: 10, cacheReadWeight: 2 })).toThrow();
  });
});

describe("BudgetGuard: warn and enforce", () => {
  test("warn mode warns once when first over and never stops", () => {
    const g = new BudgetGuard({ maxTokens: 1000, mode: "warn" });
    expect(g.sample(tokens(500), 0)).toBeNull();
    expect(g.sample(tokens(1001), 10)).toEqual({ kind: "warn", weighted: 1001, max: 1000 });
    expect(g.sample(tokens(5000), 20)).toBeNull();
    expect(g.tick(10 + 10 * DEFAULT_BUDGET_GRACE_MS)).toBeNull();
    expect(g.sample(tokens(9000), 10 + 10 * DEFAULT_BUDGET_GRACE_MS)).toBeNull();
    expect(g.state()).toEqual({ weighted: 9000, max: 1000, over: true, overSinceMs: 10, stopped: false });
  });

  test("enforce mode warns, then stops once the grace has passed (tick), once", () => {
    const g = new BudgetGuard({ maxTokens: 1000, mode: "enforce", graceMs: 60_000 });
    expect(g.tick(0)).toBeNull();
    expect(g.sample(tokens(2000), 1_000)).toEqual({ kind: "warn", weighted: 2000, max: 1000 });
    expect(g.tick(60_999)).toBeNull();
    expect(g.sample(tokens(2500), 60_999)).toBeNull();
    expect(g.tick(61_000)).toEqual({ kind: "stop", weighted: 2500, max: 1000 });
    expect(g.tick(70_000)).toBeNull();
    expect(g.sample(tokens(3000), 80_000)).toBeNull();
    expect(g.state()).toEqual({ weighted: 3000, max: 1000, over: true, overSinceMs: 1_000, stopped: true });
  });

  test("the stop also comes from a sample after the grace", () => {
    const g = new BudgetGuard({ maxTokens: 100, graceMs: 5 });
    expect(g.sample(tokens(101), 0)?.kind).toBe("warn");
    expect(g.sample(tokens(102), 5)?.kind).toBe("stop");
  });

  test("grace 0: the first sample over warns, the next tick at the same time stops", () => {
    const g = new BudgetGuard({ maxTokens: 100, graceMs: 0 });
    expect(g.sample(tokens(200), 42)?.kind).toBe("warn");
    expect(g.tick(42)?.kind).toBe("stop");
  });

  test("samples are totals: a lower one never un-trips and never lowers the figure", () => {
    const g = new BudgetGuard({ maxTokens: 1000, graceMs: 100 });
    expect(g.sample(tokens(1500), 0)?.kind).toBe("warn");
    expect(g.sample(tokens(10), 50)).toBeNull();
    expect(g.state()).toMatchObject({ weighted: 1500, over: true, overSinceMs: 0 });
    expect(g.sample(tokens(10), 100)).toEqual({ kind: "stop", weighted: 1500, max: 1000 });
  });

  test("a time that is no number never stops the run by itself", () => {
    const g = new BudgetGuard({ maxTokens: 100, graceMs: 1000 });
    expect(g.sample(tokens(200), Number.NaN)?.kind).toBe("warn");
    expect(g.tick(Number.NaN)).toBeNull();
    expect(g.state()).toMatchObject({ over: true, overSinceMs: null });
    expect(g.tick(5000)).toBeNull(); // the grace starts here
    expect(g.tick(5999)).toBeNull();
    expect(g.tick(6000)?.kind).toBe("stop");
  });

  test("a lower sample before going over does not lower the peak either", () => {
    const g = new BudgetGuard({ maxTokens: 1000 });
    g.sample(tokens(900), 0);
    g.sample(tokens(100), 1);
    expect(g.state()).toEqual({ weighted: 900, max: 1000, over: false, overSinceMs: null, stopped: false });
  });
});

describe("parseBudgetOptions", () => {
  test("no --max-tokens: the guard is off", () => {
    expect(parseBudgetOptions({})).toEqual({ ok: true, options: null });
    expect(parseBudgetOptions({ maxTokens: "" })).toEqual({ ok: true, options: null });
  });

  test("--max-tokens alone: enforce, W 0.1, 240 s", () => {
    expect(parseBudgetOptions({ maxTokens: "200000" })).toEqual({
      ok: true,
      options: { maxTokens: 200_000, mode: "enforce", cacheReadWeight: 0.1, graceMs: 240_000 },
    });
  });

  test("every flag", () => {
    expect(parseBudgetOptions({ maxTokens: "5000", budget: "warn", cacheReadWeight: "0.25", budgetGrace: "30" })).toEqual({
      ok: true,
      options: { maxTokens: 5000, mode: "warn", cacheReadWeight: 0.25, graceMs: 30_000 },
    });
    expect(parseBudgetOptions({ maxTokens: "5", budget: "ENFORCE", cacheReadWeight: "0", budgetGrace: "0" })).toEqual({
      ok: true,
      options: { maxTokens: 5, mode: "enforce", cacheReadWeight: 0, graceMs: 0 },
    });
    expect(parseBudgetOptions({ maxTokens: "5", budgetGrace: "1.5" })).toMatchObject({ ok: true, options: { graceMs: 1500 } });
  });

  const bad: [Parameters<typeof parseBudgetOptions>[0], string][] = [
    [{ maxTokens: "abc" }, "--max-tokens"],
    [{ maxTokens: "0" }, "--max-tokens"],
    [{ maxTokens: "-5" }, "--max-tokens"],
    [{ maxTokens: "1.5" }, "--max-tokens"],
    [{ maxTokens: "0x10" }, "--max-tokens"],
    [{ maxTokens: "99999999999999999999" }, "--max-tokens"],
    [{ maxTokens: "10", budget: "stop" }, "--budget"],
    [{ maxTokens: "10", cacheReadWeight: "2" }, "--cache-read-weight"],
    [{ maxTokens: "10", cacheReadWeight: "-0.1" }, "--cache-read-weight"],
    [{ maxTokens: "10", cacheReadWeight: "x" }, "--cache-read-weight"],
    [{ maxTokens: "10", budgetGrace: "-1" }, "--budget-grace"],
    [{ maxTokens: "10", budgetGrace: "4m" }, "--budget-grace"],
    [{ budget: "warn" }, "--budget"],
    [{ cacheReadWeight: "0.2" }, "--cache-read-weight"],
    [{ budgetGrace: "10" }, "--budget-grace"],
  ];
  test.each(bad)("%o is an error naming %s, on one line", (flags, flag) => {
    const parsed = parseBudgetOptions(flags);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.error.startsWith(flag)).toBe(true);
    expect(parsed.error).not.toContain("\n");
  });

  test("a flag without --max-tokens says so", () => {
    expect(parseBudgetOptions({ budget: "warn" })).toEqual({ ok: false, error: "--budget needs --max-tokens" });
  });

  test("a hostile value is shown cleaned and bounded", () => {
    const parsed = parseBudgetOptions({ maxTokens: `\u001b[31m${"9".repeat(30)}x\n${"y".repeat(500)}` });
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.error).not.toContain("\n");
      expect(parsed.error).not.toContain("\u001b");
      expect(parsed.error.length).toBeLessThan(120);
    }
  });

  test("the schemas", () => {
    expect(BudgetFlagsSchema.parse({ maxTokens: "1" })).toEqual({ maxTokens: "1" });
    expect(BudgetOptionsSchema.parse({ maxTokens: 1 })).toEqual({ maxTokens: 1, mode: "enforce", cacheReadWeight: 0.1, graceMs: 240_000 });
    expect(BudgetOptionsSchema.safeParse({ maxTokens: 1, mode: "off" }).success).toBe(false);
  });
});

// -- faults ----------------------------------------------------------------------

const STDERR = join(ROOT, "test", "fixtures", "stderr");
const stderrFixture = (name: string) => readFileSync(join(STDERR, `${name}.stderr.txt`), "utf8");
const claudeFixture = (name: string) => readFileSync(join(ROOT, "test", "fixtures", "claude", `${name}.jsonl`), "utf8");
const onStderr = (stderrTail: string) => classifyFault({ stderrTail, failure: null });
const onFailure = (failure: string) => classifyFault({ stderrTail: "", failure });

describe("classifyFault on captured stderr", () => {
  test("pi text -p, 500 after no retries: server_error, the line as evidence", () => {
    expect(onStderr(stderrFixture("c3-print-error-500-noretry"))).toEqual({ kind: "server_error", evidence: "500 standin error 500" });
  });

  const notFaults = [
    "f-resume.resume-other-cwd", // No conversation found with session ID: <uuid>
    "f-resume.resume-garbage",
    "a-plain.noverbose",
    "b-tools.variadic",
    "g2-json-dashdash-stdin", // Error: Unknown option: --
    "g12-json-prompt-starting-with-dash",
    "h4-unknown-short-flag",
    "g10-json-thinking-bogus",
    "g13-json-fork-prompt-y-plus-argv",
    "h2-help", // pi's whole --help: API keys, env vars, providers, and still no fault
  ];
  test.each(notFaults)("%s is no environment fault", (name) => {
    const text = stderrFixture(name);
    expect(text.length).toBeGreaterThan(0);
    expect(onStderr(text)).toBeNull();
    expect(onFailure(text)).toBeNull();
  });

  test("Error: Unknown option: --approve (pi 0.73.1, ground truth §1) is no fault", () => {
    expect(onStderr("Error: Unknown option: --approve\n")).toBeNull();
  });
});

describe("classifyFault on captured failures", () => {
  // pi's errorMessage, as captured (c1, c2, c4) and as the pi reducer passes it on.
  const pi: [string, FaultKind | null][] = [
    ["500 standin error 500", "server_error"],
    ["429 standin error 429", "rate_limit"],
    ["400 standin bad request", null],
    ["pi: stopped on error: 500 standin error 500", "server_error"],
    ["pi: stopped on error: 429 standin error 429", "rate_limit"],
    ["pi: stopped on error: 400 standin bad request", null],
  ];
  test.each(pi)("pi %p → %p", (failure, kind) => {
    expect(onFailure(failure)?.kind ?? null).toBe(kind);
  });

  // claude's result texts, through the claude reducer, with api_error_status.
  const claude: [string, number | null, FaultKind | null][] = [
    ["c-errors.server500", 500, "server_error"],
    ["c-errors.auth401", 401, "auth"],
    ["c-errors.overloaded", null, "overloaded"],
    ["c-errors.overloaded-default", null, "overloaded"],
    ["c-errors.badrequest", 400, null],
  ];
  test.each(claude)("claude %s (api_error_status %p) → %p", (name, status, kind) => {
    const { reduction } = reduceClaude(claudeFixture(name));
    expect(reduction.failure).not.toBeNull();
    const fault = classifyFault({ stderrTail: "", failure: reduction.failure?.message ?? null, apiErrorStatus: status });
    expect(fault?.kind ?? null).toBe(kind);
    // The text alone says it too.
    expect(onFailure(reduction.failure?.message ?? "")?.kind ?? null).toBe(kind);
    if (fault !== null) expect(fault.evidence.length).toBeLessThanOrEqual(200);
  });

  test("claude's exact texts", () => {
    expect(
      onFailure(
        "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:37451).",
      )?.kind,
    ).toBe("server_error");
    expect(onFailure("Invalid API key · Fix external API key")).toEqual({
      kind: "auth",
      evidence: "Invalid API key · Fix external API key",
    });
    expect(
      onFailure(
        "API Error: Repeated 529 Overloaded errors. The API is at capacity — this is usually temporary. Try again in a moment. If it persists, check your inference gateway (127.0.0.1:44861).",
      )?.kind,
    ).toBe("overloaded");
    expect(onFailure("API Error: 400 messages: standin says this request is invalid")).toBeNull();
    expect(onFailure("No conversation found with session ID: d5a4deb3-5905-4a22-8327-17816d6a7de6")).toBeNull();
    expect(onFailure("claude: the run did not succeed (subtype error_max_turns): Reached maximum number of turns (2)")).toBeNull();
    expect(onFailure("claude: the run did not succeed (subtype error_max_budget_usd): Reached maximum budget ($0.03)")).toBeNull();
  });
});

describe("classifyFault: one synthetic line per row", () => {
  const rows: [string, FaultKind][] = [
    ["/usr/bin/env: 'node': No such file or directory", "missing_binary"],
    ["bash: pi: command not found", "missing_binary"],
    ["cannot execute binary file: Exec format error", "cannot_start"],
    ["claude: error while loading shared libraries: libstdc++.so.6", "cannot_start"],
    ["Error: getaddrinfo ENOTFOUND api.anthropic.com", "dns"],
    ["getaddrinfo EAI_AGAIN api.openai.com", "dns"],
    ["Unable to connect to API (ENOTFOUND)", "dns"],
    ["connect ETIMEDOUT 160.79.104.10:443", "timeout"],
    ["API Error: Request timed out.", "timeout"],
    ["Request timed out. Check your internet connection and proxy settings", "timeout"],
    ["Unable to connect to API (ETIMEDOUT)", "timeout"],
    ["408 Request Timeout", "timeout"],
    ["connect ECONNREFUSED 127.0.0.1:8080", "network"],
    ["Error: Connection refused", "network"],
    ["read ECONNRESET", "network"],
    ["Error: socket hang up", "network"],
    ["TypeError: fetch failed", "network"],
    ["API Error: Connection error.", "network"],
    ["Unable to connect to API (ECONNREFUSED)", "network"],
    ["Unable to connect to API: SSL certificate has expired", "network"],
    ["401 Unauthorized", "auth"],
    ["API Error: 401 Invalid API key · Please run /login", "auth"],
    ["403 Forbidden: permission_error", "auth"],
    ["HTTP 403", "auth"],
    ["api_retry error authentication_failed", "auth"],
    ["oauth_org_not_allowed", "auth"],
    ["No API key found for anthropic.", "auth"],
    ["Not logged in · Please run /login", "auth"],
    ["OAuth token has been revoked", "auth"],
    ["billing_error", "quota"],
    ["Credit balance is too low", "quota"],
    ["429 You exceeded your current quota, please check your plan and billing details. (insufficient_quota)", "quota"],
    ["You've hit your monthly spend limit.", "quota"],
    // Usage limits that lift by themselves (test/fixtures/<agent>/quota): the run is parked.
    ["[API Error: You have exhausted your daily quota on this model.]", "quota_wall"],
    ["You've hit your session limit · resets 10:10pm (UTC)", "quota_wall"],
    [
      "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 4 days 6 hours 37 minutes.",
      "quota_wall",
    ],
    // codex 0.169.0 as it prints it (test/e2e-quota-wall.test.ts): a typographic apostrophe.
    ["You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 7:49 AM.", "quota_wall"],
    ["Claude AI usage limit reached|1774447200", "quota_wall"],
    ["5-hour limit reached ∙ resets 3pm", "quota_wall"],
    ['Codex error: {"type":"error","error":{"type":"usage_limit_reached"}}', "quota_wall"],
    ["The usage limit has been reached", "quota_wall"],
    ['429: {"type":"FreeUsageLimitError","message":"Rate limit exceeded. Please try again later."}', "quota_wall"],
    [
      "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day per user per tier'. Expected quota reset within 24h.",
      "quota_wall",
    ],
    ["429 Too Many Requests", "rate_limit"],
    // gemini's retry of a 429 (fixtures/gemini/c-errors.ratelimit): the quota is only Google's example.
    ["Attempt 1 failed: Resource has been exhausted (e.g. check quota).", "rate_limit"],
    ["status code 429", "rate_limit"],
    ["rate_limit_error: Number of request tokens has exceeded your per-minute rate limit", "rate_limit"],
    ["Rate limit reached for requests", "rate_limit"],
    ['529 {"type":"error","error":{"type":"overloaded_error"}}', "overloaded"],
    ["API Error: Repeated 529 Overloaded errors", "overloaded"],
    ["Overloaded", "overloaded"],
    ["API Error: 502 Bad Gateway", "server_error"],
    ["503 Service Unavailable", "server_error"],
    ["server_error", "server_error"],
    ["Internal server error", "server_error"],
    ["(subtype success, api_error_status 500)", "server_error"],
    ["HTTP/1.1 504 Gateway Timeout", "server_error"],
  ];
  test.each(rows)("%p → %s", (line, kind) => {
    expect(onStderr(`noise before\n${line}\n`)?.kind).toBe(kind);
    expect(onFailure(line)?.kind).toBe(kind);
  });

  const clean: string[] = [
    "timed out after 600 s; the agent's process group was killed",
    "interrupted: agentport was asked to stop and ended the agent",
    "claude: exited with code 1 after its result",
    "claude: killed by SIGKILL",
    "check your inference gateway (127.0.0.1:500)",
    "retry delay: 500 ms",
    "waited | 529 s",
    "status: 500 tokens over",
    "Command timed out after 2m 0s",
    "wrote 401 lines to src/big.ts",
    "Error: When using --print, --output-format=stream-json requires --verbose",
    'Warning: Invalid thinking level "bogus". Valid values: off, minimal, low, medium, high, xhigh',
    "API Error: 404 model: claude-nope not found",
    "",
  ];
  test.each(clean)("%p is no fault", (line) => {
    expect(onStderr(line)).toBeNull();
    expect(onFailure(line)).toBeNull();
  });

  test("every kind has a source and every row a known kind", () => {
    for (const row of FAULT_ROWS) expect(FAULT_KINDS).toContain(row.kind);
    expect(new Set(FAULT_ROWS.map((r) => r.kind)).size).toBe(FAULT_KINDS.length);
  });
});

describe("classifyFault: sources and their order", () => {
  test("spawn errors", () => {
    expect(classifyFault({ stderrTail: "", failure: "/opt/pi: not found", spawnError: "not_found" })).toEqual({
      kind: "missing_binary",
      evidence: "/opt/pi: not found",
    });
    expect(classifyFault({ stderrTail: "", failure: null, spawnError: "not_executable" })).toEqual({
      kind: "cannot_start",
      evidence: "spawn: not_executable",
    });
    expect(classifyFault({ stderrTail: "", failure: null, spawnError: "spawn_failed" })?.kind).toBe("cannot_start");
  });

  test("api_error_status alone", () => {
    const status: [number, FaultKind | null][] = [
      [401, "auth"],
      [403, "auth"],
      [402, "quota"],
      [408, "timeout"],
      [429, "rate_limit"],
      [529, "overloaded"],
      [500, "server_error"],
      [503, "server_error"],
      [400, null],
      [404, null],
    ];
    for (const [code, kind] of status) {
      expect(classifyFault({ stderrTail: "", failure: null, apiErrorStatus: code })?.kind ?? null).toBe(kind);
    }
    expect(classifyFault({ stderrTail: "", failure: null, apiErrorStatus: 500 })?.evidence).toBe("api_error_status 500");
    expect(classifyFault({ stderrTail: "", failure: "some text", apiErrorStatus: 401 })).toEqual({ kind: "auth", evidence: "some text" });
  });

  test("the failure comes before the stderr; the newest stderr line comes first", () => {
    expect(classifyFault({ stderrTail: "read ECONNRESET\n", failure: "API Error: 401 Invalid API key" })?.kind).toBe("auth");
    expect(onStderr("read ECONNRESET\nretrying\ngetaddrinfo ENOTFOUND api.x\n")?.kind).toBe("dns");
    expect(classifyFault({ stderrTail: "getaddrinfo ENOTFOUND api.x", failure: "claude: exited with code 1" })?.kind).toBe("dns");
  });

  test("retry categories count only when the agent reported no failure of its own", () => {
    const killed = (retryErrors: string[]) => classifyFault({ stderrTail: "", failure: null, retryErrors });
    expect(killed(["server_error", "overloaded"])).toEqual({ kind: "overloaded", evidence: "api_retry error overloaded" });
    expect(killed(["unknown"])?.kind).toBe("network");
    expect(killed(["rate_limit"])?.kind).toBe("rate_limit");
    expect(killed(["authentication_failed"])?.kind).toBe("auth");
    expect(killed(["billing_error"])?.kind).toBe("quota");
    expect(killed(["invalid_request"])).toBeNull();
    expect(killed(["constructor"])).toBeNull();
    expect(killed([])).toBeNull();
    expect(
      classifyFault({ stderrTail: "", failure: "claude: the run did not succeed (subtype error_max_turns)", retryErrors: ["overloaded"] }),
    ).toBeNull();
  });
});

describe("classifyFault: evidence", () => {
  test("never carries a key", () => {
    const lines = [
      "401 Unauthorized: invalid x-api-key sk-ant-api03-AbCdEf0123456789_abcdefGHIJ-klmnop",
      "Authorization: Bearer abc.def.ghi-123456 rejected: 401",
      "ANTHROPIC_API_KEY=sk-proj-0123456789abcdef was refused: 401",
      'request {"api_key":"k3y-v4lue-s3cret"} got 401 Unauthorized',
      "401 token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      "401 Unauthorized key 0123456789abcdef0123456789abcdef0123",
      "401 Unauthorized Q29ubmVjdGlvbiByZWZ1c2VkIGJ5IHBlZXIgMTIzNDU2Nzg5MA==",
    ];
    for (const line of lines) {
      const fault = onStderr(line);
      expect(fault?.kind).toBe("auth");
      const e = fault?.evidence ?? "";
      expect(e).toContain("[redacted]");
      for (const secret of ["sk-ant", "sk-proj", "abc.def", "k3y-v4lue", "eyJ", "0123456789abcdef0123", "Q29ubmVj"])
        expect(e).not.toContain(secret);
    }
  });

  test("keeps what is not a key: UUIDs, env names, words", () => {
    expect(redact("No conversation found with session ID: d5a4deb3-5905-4a22-8327-17816d6a7de6")).toBe(
      "No conversation found with session ID: d5a4deb3-5905-4a22-8327-17816d6a7de6",
    );
    expect(redact("set CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC")).toBe("set CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC");
    expect(redact("Invalid API key · Fix external API key")).toBe("Invalid API key · Fix external API key");
  });

  test("one clean line of at most 200 characters", () => {
    const long = `\u001b[31mconnect ECONNREFUSED 127.0.0.1:443\u001b[0m ${"x ".repeat(5000)}`;
    const fault = onStderr(long);
    expect(fault?.kind).toBe("network");
    expect(fault?.evidence.startsWith("connect ECONNREFUSED 127.0.0.1:443")).toBe(true);
    expect(fault?.evidence.length).toBeLessThanOrEqual(200);
    expect(evidence("a\tb\u0000c")).toBe("a b c");
  });

  test("a key straddling the 200-character cut is redacted whole first", () => {
    const line = `ECONNRESET ${"y ".repeat(90)}sk-ant-api03-${"Z9".repeat(40)}`;
    const e = onStderr(line)?.evidence ?? "";
    expect(e).not.toMatch(/sk-|Z9Z9/);
  });
});

describe("Supervisor: the --grace wrap-up", () => {
  const at = (s: number, wall = s) => ({ mono: s * 1000, wall: wall * 1000 });

  test("due at the timeout minus the grace, told once, the hard stop at the timeout", () => {
    const sup = new Supervisor({ timeoutMs: 10_000, graceMs: 3_000 });
    sup.start(at(0));
    expect(sup.check(at(6.9))).toBeNull();
    expect(sup.takeWrapUp()).toBeNull();
    expect(sup.check(at(7))).toBeNull();
    expect(sup.takeWrapUp()).toBe("Time is nearly up: finish now, save your work and report.");
    expect(sup.takeWrapUp()).toBeNull();
    expect(sup.check(at(10))?.kind).toBe("timeout");
    expect(sup.facts()).toMatchObject({ wrap_up: "timeout", wrap_up_finished: false });
  });

  test("on the wall clock too (the machine slept); an agent done in the grace period finished", () => {
    const sup = new Supervisor({ timeoutMs: 10_000, graceMs: 3_000 });
    sup.start(at(0));
    sup.check(at(1, 8));
    expect(sup.takeWrapUp()).not.toBeNull();
    expect(sup.facts()).toMatchObject({ wrap_up: "timeout", wrap_up_finished: true });
  });

  test("a wrap-up the agent refused (pi's steer answered with an error) is not said to be sent, nor offered again", () => {
    const sup = new Supervisor({ timeoutMs: 10_000, graceMs: 3_000 });
    sup.start(at(0));
    sup.check(at(7));
    expect(sup.takeWrapUp()).not.toBeNull();
    sup.wrapUpLost();
    sup.check(at(8));
    expect(sup.takeWrapUp()).toBeNull();
    expect(sup.facts()).not.toHaveProperty("wrap_up");
  });

  test("an enforced token budget that goes over: the budget's wrap-up; a warn-only budget: none", () => {
    for (const [mode, told] of [
      ["enforce", "Your token budget is spent: finish now, save your work and report."],
      ["warn", null],
    ] as const) {
      const sup = new Supervisor({ graceMs: 5_000, budget: BudgetOptionsSchema.parse({ maxTokens: 10, mode, graceMs: 60_000 }) });
      sup.start(at(0));
      sup.usage({ input: 20, output: 0, cache_read: 0, cache_write: 0 }, at(1));
      expect(sup.check(at(1))).toBeNull();
      expect(sup.takeWrapUp()).toBe(told);
    }
  });

  test("never told without --grace, nor after a stop", () => {
    const none = new Supervisor({ timeoutMs: 10_000 });
    none.start(at(0));
    none.check(at(9.9));
    expect(none.takeWrapUp()).toBeNull();
    const late = new Supervisor({ timeoutMs: 10_000, graceMs: 1_000 });
    late.start(at(0));
    expect(late.check(at(12))?.kind).toBe("timeout");
    expect(late.takeWrapUp()).toBeNull();
    expect(late.facts().wrap_up).toBeUndefined();
  });
});
