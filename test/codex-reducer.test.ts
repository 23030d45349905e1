// The codex reducer on every stream captured from real codex 0.169.0
// (../shared/fixtures/codex, copied into test/fixtures/codex): each capture's
// reduction is checked against what its own records say (an oracle written
// here from the ground truth), then the cases the sheet singles out.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { CodexReducer, type CodexReducerOptions } from "../src/core/codex/reducer.ts";
import { routerRefusals } from "../src/core/codex/stderr.ts";
import { judge } from "../src/core/judge.ts";
import { LineFramer } from "../src/core/frame.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import { bare, ROOT } from "./helpers.ts";

const DIR = join(ROOT, "test", "fixtures", "codex");
const CAPTURES = readdirSync(DIR)
  .filter((f) => f.endsWith(".jsonl"))
  .map((f) => f.slice(0, -".jsonl".length));

const read = (name: string, ext: string) =>
  existsSync(join(DIR, `${name}.${ext}`)) ? readFileSync(join(DIR, `${name}.${ext}`), "utf8") : "";

export function reduceCodex(text: string, options: CodexReducerOptions & { stderr?: string } = {}) {
  const events: ProgressEvent[] = [];
  const reducer = new CodexReducer({ ...options, emit: (e) => events.push(bare(e)) });
  const framer = new LineFramer(reducer);
  framer.push(new TextEncoder().encode(text));
  framer.end();
  reducer.streamEnded();
  if (options.stderr !== undefined) reducer.takeStderr(options.stderr);
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

describe("the codex reducer on every capture", () => {
  test("there are captures", () => {
    expect(CAPTURES.length).toBeGreaterThan(60);
  });
  for (const name of CAPTURES) {
    test(name, () => {
      const stdout = read(name, "jsonl");
      const stderr = read(name, "stderr.txt");
      const { reading } = reduceCodex(stdout, { stderr });
      const recs = records(stdout);
      expect(reading.costMicroUsd).toBeNull();
      expect(reading.model).toBeNull();
      expect(reading.refused.length).toBe(stderr.split("\n").filter((l) => l.includes("ERROR codex_core::tools::router:")).length);
      if (recs === null) {
        // --json was not given (text output, --version): no stream to read.
        expect(reading.failure?.message).toContain("protocol violation");
        return;
      }
      const first = recs[0];
      expect(reading.sessionId).toBe(first?.type === "thread.started" ? first.thread_id : null);
      const last = recs[recs.length - 1];
      if (last?.type === "turn.completed") {
        const messages = recs.filter((r) => r.type === "item.completed" && r.item?.type === "agent_message");
        expect(reading.failure).toBeNull();
        expect(reading.text).toBe(messages[messages.length - 1].item.text);
        expect((reading.tokens?.input ?? -1) + (reading.tokens?.cache_read ?? -1)).toBe(last.usage.input_tokens);
        expect(reading.tokens?.cache_read).toBe(last.usage.cached_input_tokens);
        expect(reading.tokens?.output).toBe(last.usage.output_tokens);
        expect(reading.finished).toBe(true);
      } else if (last?.type === "turn.failed") {
        expect(reading.text).toBeNull();
        expect(reading.failure?.message).toStartWith("codex: the turn failed: ");
        expect(reading.failure?.message).toContain(String(last.error.message).slice(0, 60));
        expect(reading.finished).toBe(true);
      } else {
        // Killed (a signal), or codex stopped before its first record.
        expect(reading.text).toBeNull();
        expect(reading.finished).toBe(false);
        expect(reading.failure?.message).toBe(
          recs.length === 0 ? "codex: exited without starting a thread" : "codex: exited without turn.completed or turn.failed",
        );
      }
    });
  }
});

describe("what the codex sheet singles out", () => {
  test("usage is the thread's running total: a resume subtracts the earlier phases'", () => {
    const first = reduceCodex(read("f-resume.first", "jsonl")).reading;
    const resumed = reduceCodex(read("f-resume.resume-id", "jsonl"), { previous: first.tokens }).reading;
    expect(first.tokens?.input).toBe(5182);
    expect(resumed.threadTotal?.input).toBe(10445);
    // The resumed request alone was 5263 tokens (f-resume.resume-id.requests).
    expect(resumed.tokens?.input).toBe(10445 - 5182);
    expect(resumed.tokens?.output).toBe(82 - (first.tokens?.output ?? 0));
  });

  test("a tool run: four shell calls, one failed, the final text the last message", () => {
    const { reading, events } = reduceCodex(read("b-tools.exec", "jsonl"), { stderr: read("b-tools.exec", "stderr.txt") });
    expect(reading.text).toBe("All done.");
    expect(reading.summary.tool_calls).toBe(4);
    expect(reading.summary.tool_errors).toBe(1);
    expect(events.filter((e) => e.kind === "tool_started").map((e) => e.tool)).toEqual(["shell", "shell", "shell", "shell"]);
    // The unknown tool left no item: only stderr names it.
    expect(reading.refused).toEqual([{ kind: "permission", subject: "unsupported tool no_such_tool" }]);
    expect(reading.summary.refused_seen_in).toBe("stderr");
  });

  test("refusals are invisible in the stream: without stderr none is counted, with it each is named by kind", () => {
    const stdout = read("d-permission.rules-forbidden", "jsonl");
    expect(reduceCodex(stdout).reading.refused).toEqual([]);
    const { reading } = reduceCodex(stdout, { stderr: read("d-permission.rules-forbidden", "stderr.txt") });
    expect(reading.refused.map((r) => r.subject)).toEqual([
      "exec_command (execpolicy rule)",
      "exec_command (execpolicy rule)",
      "escalated permissions (approval policy never)",
    ]);
    expect(JSON.stringify(reading.refused)).not.toContain("touch");
  });

  test("a reviewer's deny is a declined item: counted from the stream when stderr is not given", () => {
    const { reading } = reduceCodex(read("d-permission.approve-for-me", "jsonl"));
    expect(reading.refused).toEqual([{ kind: "permission", subject: "shell (declined)" }]);
    expect(reading.summary.refused_seen_in).toBe("stream");
    const withStderr = reduceCodex(read("d-permission.approve-for-me", "jsonl"), {
      stderr: read("d-permission.approve-for-me", "stderr.txt"),
    }).reading;
    expect(withStderr.refused).toEqual([{ kind: "permission", subject: "exec_command (reviewer)" }]);
  });

  test("the warnings before the turn (unknown model metadata) are not a failure", () => {
    const { reading, events } = reduceCodex(read("a-plain.plain", "jsonl"));
    expect(reading.summary.warnings).toBe(1);
    expect(reading.text).toBe("Hello from the stand-in.");
    expect(events[0]?.kind).toBe("started");
  });

  test("retry notices are retries; 401 and an exhausted 500 are environment and provider faults", () => {
    const auth = reduceCodex(read("c-errors.auth401", "jsonl")).reading;
    expect(auth.summary.api_retries).toBe(2);
    expect(auth.summary.api_error_status).toBe(401);
    const authVerdict = judge({
      agent: "pi",
      reduction: auth,
      proc: { exitCode: 1, signal: null, stoppedBy: null, stderrTail: "" },
    }).verdict;
    expect(authVerdict.fault?.kind).toBe("auth");
    expect(authVerdict.env_fault).toBe(true);
    const server = reduceCodex(read("c-errors.server500", "jsonl")).reading;
    // codex replaces the server's message with its own sentence: the status is inferred from it.
    expect(server.failure?.message).toContain("experiencing high demand");
    expect(server.summary.api_error_status).toBe(500);
    expect(
      judge({ agent: "pi", reduction: server, proc: { exitCode: 1, signal: null, stoppedBy: null, stderrTail: "" } }).verdict.fault?.kind,
    ).toBe("server_error");
  });

  test("a stop while codex retries is the provider's; once the model answered after the retry, it is not", () => {
    const lines = read("c-errors.ratelimit", "jsonl").split("\n");
    const stopped = { exitCode: null, signal: "SIGTERM", stoppedBy: "timeout" as const, stderrTail: "" };
    // Cut after the retry notice: still retrying.
    const retrying = reduceCodex(lines.slice(0, 4).join("\n") + "\n").reading;
    expect(retrying.pendingRetryError).toContain("429 Too Many Requests");
    expect(judge({ agent: "codex", reduction: retrying, proc: stopped }).verdict).toMatchObject({
      env_fault: true,
      fault: { kind: "rate_limit" },
    });
    // Cut after the answer that followed it: the retry worked, the stop is a plain one.
    const recovered = reduceCodex(lines.slice(0, 5).join("\n") + "\n").reading;
    expect(recovered.pendingRetryError).toBeNull();
    expect(recovered.summary.last_retry_error).toContain("429");
    expect(judge({ agent: "codex", reduction: recovered, proc: stopped }).verdict).toMatchObject({ env_fault: false, fault: null });
  });

  test("connection refused retries forever: the reading says it was waiting for the network", () => {
    const { reading, events } = reduceCodex(read("i-misc.refused", "jsonl"));
    expect(reading.waitingForNetwork).toBe(true);
    expect(reading.finished).toBe(false);
    expect(events.filter((e) => e.kind === "provider_retry").map((e) => e.detail)).toEqual(["waiting for network", "waiting for network"]);
    // Bounded (--disable unbounded_connection_retries), it fails like any other error.
    expect(reduceCodex(read("i-misc.refused-bounded", "jsonl")).reading.failure?.message).toContain("Connection failed");
  });

  test("a price gives a cost; without one it is null, never 0", () => {
    const plain = read("a-plain.plain", "jsonl");
    expect(reduceCodex(plain).reading.costMicroUsd).toBeNull();
    // 1000 input at $2, 200 cached at $0.5, 7 output at $8 per million.
    expect(reduceCodex(plain, { price: { input: 2, output: 8, cache_read: 0.5 } }).reading.costMicroUsd).toBe(2000 + 100 + 56);
  });

  test("the thread id is bound as it arrives, once", () => {
    const seen: string[] = [];
    reduceCodex(read("a-plain.plain", "jsonl"), { onThread: (id) => seen.push(id) });
    expect(seen).toEqual(["01a23054-98fa-73d1-90d1-43eb5d54f812"]);
  });

  test("router lines past the bound are counted, not named", () => {
    const line = "2026-12-01T06:39:53Z ERROR codex_core::tools::router: error=unsupported call: x\n";
    const found = routerRefusals(line.repeat(100));
    expect(found.count).toBe(100);
    expect(found.refused.length).toBe(64);
  });
});
