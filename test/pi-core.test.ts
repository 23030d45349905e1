// The pure pi pieces: the event reducer over captured pi 0.73.1 streams and
// synthetic lines, the judge, capabilities, argv, the environment vault.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { judge } from "../src/core/judge.ts";
import { compileSchema, defaultEnvelopeJsonSchema, envelopeFromText, envelopeFromTool, type EnvelopeCheck } from "../src/core/envelope.ts";
import type { PiReading } from "../src/core/pi/reducer.ts";
import { unmetRequirement } from "../src/core/pi/requirements.ts";
import { parseCapabilities, sessionNaming } from "../src/core/pi/capabilities.ts";
import { agentEnvironment, parseDotenv } from "../src/core/env.ts";
import { piArgv, route } from "../src/core/pi/argv.ts";
import type { ProcessOutcome } from "../src/core/outcome.ts";
import { lines, reducePi, ROOT } from "./helpers.ts";

const FIX = join(ROOT, "test", "fixtures", "pi");
const fixture = (name: string) => readFileSync(join(FIX, `${name}.jsonl`), "utf8");
const exited: ProcessOutcome = { exitCode: 0, signal: null, stoppedBy: null, stderrTail: "" };
const check = compileSchema(defaultEnvelopeJsonSchema());
if (!check.ok) throw new Error(check.error);
interface JudgeRequest {
  requireExt: string[];
  route: string | null;
  envelope: ((value: unknown) => EnvelopeCheck) | null;
}
const plain: JudgeRequest = { requireExt: [], route: null, envelope: null };

/** The one judge, given what a pi phase gives it. */
function judgePi(reading: PiReading, request: JudgeRequest, proc: ProcessOutcome) {
  return judge({
    agent: "pi",
    reduction: reading,
    proc,
    requirement: unmetRequirement(reading, request),
    envelope: { check: request.envelope, delivered: envelopeFromTool("report_phase", reading.envelope, reading.envelopeError), nudges: 0 },
  }).verdict;
}

describe("PiReducer over captured pi 0.73.1 streams", () => {
  test("a text answer: header id and cwd, text, tokens, cost, observed model", () => {
    const { reading, events } = reducePi(fixture("a1-json-text-argv"));
    expect(reading.failure).toBeNull();
    expect(reading.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(reading.headerCwd).toBe("<TMP>/project");
    expect(reading.text).toBeString();
    expect(reading.stopReason).toBe("stop");
    expect(reading.observedModel).toBe("standin/standin-model");
    expect(reading.tokens?.input).toBeGreaterThan(0);
    expect(reading.costMicroUsd).toBeGreaterThan(0);
    expect(events[0]).toEqual({ kind: "started" });
    expect(events).toContainEqual({ kind: "assistant_text" });
  });

  test("a read tool call then text: the path relative to the cwd; bash shows only its name", () => {
    const read = reducePi(fixture("b1-json-tool-read"), { cwd: "<TMP>/project" });
    expect(read.events).toContainEqual({ kind: "tool_started", tool: "read", detail: "hello.txt" });
    expect(read.events).toContainEqual({ kind: "tool_finished", tool: "read" });
    expect(read.reading.text).toBe("The file says hi.");
    expect(read.reading.summary.tool_calls).toBe(1);
    expect(read.reading.tokens).toEqual({ input: 200, output: 8, cache_read: 0, cache_write: 0 });
    const bash = reducePi(fixture("b2-json-tool-bash"));
    const started = bash.events.find((e) => e.kind === "tool_started");
    expect(started).toEqual({ kind: "tool_started", tool: "bash", detail: "" });
    expect(JSON.stringify(bash.events)).not.toContain("echo");
  });

  test("a tool that is not enabled is a tool failure, and the run goes on", () => {
    const { reading, events } = reducePi(fixture("b4-json-tool-not-enabled"));
    expect(events).toContainEqual({ kind: "tool_failed", tool: "bash" });
    expect(reading.summary.tool_errors).toBe(1);
    expect(reading.stopReason).toBe("stop");
  });

  test("500 retried to the end: stopReason error with its message, retries counted, judged a failure", () => {
    const { reading, events } = reducePi(fixture("c1-json-error-500"));
    expect(reading.stopReason).toBe("error");
    expect(reading.errorMessage).toBe("500 standin error 500");
    expect(reading.summary.provider_retries).toBe(3);
    expect(reading.summary.retry_outcome).toBe("failure");
    expect(events).toContainEqual({ kind: "provider_retry", detail: "attempt 1 of 3" });
    const judged = judgePi(reading, plain, exited);
    expect(judged.failure?.message).toBe("pi: stopped on error: 500 standin error 500");
  });

  test("429 then success: the good answer wins", () => {
    const { reading } = reducePi(fixture("c2-json-error-429-then-ok"));
    expect(reading.stopReason).toBe("stop");
    expect(reading.summary.retry_outcome).toBe("success");
    expect(judgePi(reading, plain, exited).failure).toBeNull();
  });

  test("400 is not retried and fails", () => {
    const { reading } = reducePi(fixture("c4-json-error-400"));
    expect(reading.summary.provider_retries).toBe(0);
    expect(judgePi(reading, plain, exited).failure?.message).toContain("400 standin bad request");
  });

  test("no prompt: the header alone is no answer", () => {
    const { reading } = reducePi(fixture("g5-json-no-prompt-devnull"));
    expect(reading.failure?.kind).toBe("no_result");
    expect(reading.assistantMessages).toBe(0);
    expect(judgePi(reading, plain, exited).failure?.message).toBe("pi: no answer (exit code 0)");
  });
});

const header = { type: "session", version: 3, id: "0193-aaaa-bbbb", timestamp: "t", cwd: "/w" };
const assistant = (text: string, extra: Record<string, unknown> = {}) => ({
  type: "message_end",
  message: {
    role: "assistant",
    content: [{ type: "text", text }],
    provider: "p",
    model: "m",
    stopReason: "stop",
    usage: { input: 10, output: 2, cacheRead: 1, cacheWrite: 0, cost: { total: 0.0001 } },
    ...extra,
  },
});
const envelopeEnd = (details: unknown, isError = false, text = "reported") => ({
  type: "tool_execution_end",
  toolCallId: "c1",
  toolName: "report_phase",
  result: { content: [{ type: "text", text }], details },
  isError,
});

describe("PiReducer: synthetic lines", () => {
  test("the first line must be the session header", () => {
    expect(reducePi(lines(assistant("x"))).reading.failure?.message).toContain("the first line is not the session header");
    expect(reducePi(lines(assistant("x"), { type: "agent_end" }), { expectHeader: false }).reading.failure).toBeNull();
  });

  test("a stray non-JSON line (an extension's console.log) is counted and skipped; blank lines too", () => {
    const { reading } = reducePi(lines("loading my-extension…", header, "{nope", "", assistant("x"), { type: "agent_end" }));
    expect(reading.failure).toBeNull();
    expect(reading.finished).toBe(true);
    expect(reading.summary.non_json_lines).toBe(2);
    expect(reading.summary.blank_lines).toBe(1);
  });

  test("an unterminated last line: a whole record is accepted and counted, an unparsable tail is a protocol violation", () => {
    const whole = reducePi(`${lines(header, assistant("x"))}{"type":"agent_end"}`).reading;
    expect(whole.failure).toBeNull();
    expect(whole.summary.unterminated_last_line).toBe(true);
    const cut = reducePi(`${lines(header, assistant("x"), { type: "agent_end" })}{"type":"agent_e`).reading;
    expect(cut.failure?.kind).toBe("protocol");
    expect(cut.failure?.message).toContain("the last line has no LF and is not a whole record");
    // Without the run's end, "no result" comes first.
    const early = reducePi(`${lines(header, assistant("x"))}{"type":"agent_e`).reading;
    expect(early.failure?.kind).toBe("no_result");
    expect(early.failure?.message).toBe(
      "pi: no result: the stream ended before the run's agent_end; the last line has no LF and is not a whole record (16 characters)",
    );
  });

  test("the run is finished only at its last agent_end: a retry reopens it", () => {
    const retry = { type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "429 slow down" };
    const err = assistant("", { stopReason: "error", errorMessage: "429 slow down" });
    const reopened = reducePi(lines(header, { type: "agent_start" }, err, { type: "agent_end" }, retry)).reading;
    expect(reopened.finished).toBe(false);
    expect(reopened.pendingRetryError).toBe("429 slow down");
    const done = reducePi(
      lines(header, { type: "agent_start" }, err, { type: "agent_end" }, retry, { type: "agent_start" }, assistant("ok"), {
        type: "agent_end",
      }),
    ).reading;
    expect(done.finished).toBe(true);
    expect(done.failure).toBeNull();
  });

  test("cost and tokens are summed over messages; one without usage makes them unknown", () => {
    const both = reducePi(lines(header, assistant("a"), assistant("b"))).reading;
    expect(both.costMicroUsd).toBe(200);
    expect(both.tokens).toEqual({ input: 20, output: 4, cache_read: 2, cache_write: 0 });
    expect(both.text).toBe("b");
    const missing = reducePi(lines(header, assistant("a"), assistant("b", { usage: {} }))).reading;
    expect(missing.tokens).toBeNull();
    expect(missing.costMicroUsd).toBeNull();
  });

  test("the envelope comes from a non-error report_phase end; an error end keeps pi's message without the echoed arguments", () => {
    const ok = reducePi(lines(header, envelopeEnd({ status: "success", summary: "s", changed_files: [] }), assistant("done"))).reading;
    expect(ok.envelope).toEqual({ status: "success", summary: "s", changed_files: [] });
    const bad = reducePi(
      lines(
        header,
        envelopeEnd(
          undefined,
          true,
          'Validation failed for tool "report_phase":\n  - status: must be equal\n\nReceived arguments:\n{"status":"sk-SECRET"}',
        ),
        assistant("done"),
      ),
    ).reading;
    expect(bad.envelope).toBeNull();
    expect(bad.envelopeError).toBe('Validation failed for tool "report_phase":   - status: must be equal');
  });

  test("the inventory from an entry_appended event (the 0.85 dialect)", () => {
    const entry = {
      type: "entry_appended",
      entry: { type: "custom", customType: "agentport-inventory", data: { pi_version: "0.85.0", extensions: ["agentport", "guard"] } },
    };
    expect(reducePi(lines(header, entry, assistant("x"))).reading.inventory).toEqual({
      piVersion: "0.85.0",
      extensions: ["agentport", "guard"],
    });
  });

  test("onHeader binds pi's id as soon as the header arrives", () => {
    const seen: string[] = [];
    reducePi(lines(header), { onHeader: (id, cwd) => seen.push(`${id}@${cwd}`) });
    expect(seen).toEqual(["0193-aaaa-bbbb@/w"]);
  });
});

describe("the judge on pi readings", () => {
  const read = (...records: unknown[]) => reducePi(lines(header, ...records, { type: "agent_end" })).reading;
  const withEnvelope: JudgeRequest = { ...plain, envelope: check.check };

  test("required extensions: fail closed without an inventory, name the missing ones", () => {
    const r = read(assistant("x"));
    expect(judgePi(r, { ...plain, requireExt: ["guard"] }, exited).failure?.message).toContain("pi reported no inventory");
    r.inventory = { piVersion: "0.73.1", extensions: ["agentport"] };
    expect(judgePi(r, { ...plain, requireExt: ["guard", "agentport"] }, exited).failure?.message).toBe(
      "pi: required extensions missing: guard (pi 0.73.1 loaded: agentport)",
    );
    r.inventory.extensions.push("guard");
    expect(judgePi(r, { ...plain, requireExt: ["guard"] }, exited).failure).toBeNull();
  });

  test("the envelope first: valid, invalid (first schema error), missing", () => {
    const valid = judgePi(
      read(envelopeEnd({ status: "success", summary: "s", changed_files: ["a"] }), assistant("done")),
      withEnvelope,
      exited,
    );
    expect(valid.failure).toBeNull();
    expect(valid.envelope).toEqual({ status: "success", summary: "s", changed_files: ["a"] });
    const invalid = judgePi(
      read(envelopeEnd({ status: "maybe", summary: "s", changed_files: [] }), assistant("done")),
      withEnvelope,
      exited,
    );
    expect(invalid.failure?.message).toContain("invalid envelope: status:");
    expect(judgePi(read(assistant("done")), withEnvelope, exited).failure).toEqual({
      kind: "envelope_missing",
      message: "no envelope: the run ended without a successful report_phase call",
    });
  });

  test("aborted and error stops fail with their message; a non-zero exit with no text fails with stderr", () => {
    expect(
      judgePi(read(assistant("", { stopReason: "aborted", errorMessage: "Request was aborted" })), plain, exited).failure?.message,
    ).toBe("pi: stopped on aborted: Request was aborted");
    const r = read(assistant("", { stopReason: "stop" }));
    expect(judgePi(r, plain, { ...exited, exitCode: 1, stderrTail: "boom\nError: Unknown option: --approve" }).failure).toEqual({
      kind: "exited",
      message: "pi: exited with code 1 after its result; stderr: boom | Error: Unknown option: --approve",
    });
  });

  test("an observed model that differs from the requested route fails", () => {
    expect(judgePi(read(assistant("x")), { ...plain, route: "p/other" }, exited).failure?.message).toBe(
      "pi: observed model p/m is not the requested p/other",
    );
    expect(judgePi(read(assistant("x")), { ...plain, route: "p/m" }, exited).failure).toBeNull();
  });
});

describe("envelopes", () => {
  test("the default schema is exported as JSON Schema and checks its own shape", () => {
    const schema = defaultEnvelopeJsonSchema();
    expect(schema.required).toEqual(["status", "summary", "changed_files"]);
    expect(check.check({ status: "success", summary: "", changed_files: [] }).ok).toBe(true);
    expect(check.check({ status: "success", summary: "", changed_files: [1] })).toEqual({
      ok: false,
      error: "changed_files.0: Invalid input: expected string, received number",
    });
  });

  test("claude's envelope: the last fenced json block of the final text", () => {
    expect(envelopeFromText('a\n```json\n{"x":1}\n```\nb\n```json\n{"x":2}\n```')).toEqual({ found: true, value: { x: 2 } });
    expect(envelopeFromText("no block").found).toBe(false);
    expect(envelopeFromText(null)).toEqual({ found: false, error: "the run has no final text" });
    expect(envelopeFromText("done")).toEqual({ found: false, error: "no fenced json block and no JSON object in the final text" });
  });

  test("a schema zod cannot read is refused with its reason", () => {
    expect(compileSchema([1]).ok).toBe(false);
  });
});

describe("pi capabilities and argv", () => {
  const help73 = readFileSync(join(FIX, "h2-help.stderr.txt"), "utf8");
  const caps73 = parseCapabilities("0.73.1", help73);
  const caps85 = parseCapabilities("0.85.0", `${help73}\n  --session-id <uuid>  Name the session\n  --approve  Trust .pi/`);

  test("0.73.1's help: --session and --session-dir but no --session-id or --approve", () => {
    expect(caps73.version).toBe("0.73.1");
    expect(caps73.flags["--session"]).toBe(true);
    expect(caps73.flags["--session-dir"]).toBe(true);
    expect(caps73.flags["--session-id"]).toBe(false);
    expect(caps73.flags["--approve"]).toBe(false);
    expect(caps73.flags["--offline"]).toBe(true);
    expect(sessionNaming(caps73)).toBe("session-file");
    expect(sessionNaming(caps85)).toBe("session-id");
  });

  const base = {
    bin: "pi",
    mode: "json" as const,
    sessionDir: "/s",
    sessionId: "id-1",
    sessionFile: "/s/f.jsonl",
    gateway: "openrouter",
    direct: false,
    extensions: [],
  };

  test("0.73.1: --session <file>, never --session-id, --approve or --; the prompt never in argv", () => {
    const argv = piArgv({
      ...base,
      caps: caps73,
      model: "z-ai/glm-5",
      tools: ["read", "bash"],
      envelopeTool: "report_phase",
      extensions: ["/x/agentport.ts"],
    });
    expect(argv).toEqual([
      "pi",
      "--mode",
      "json",
      "--session",
      "/s/f.jsonl",
      "--session-dir",
      "/s",
      "--no-skills",
      "--no-prompt-templates",
      "--offline",
      "--model",
      "openrouter/z-ai/glm-5",
      "--tools",
      "read,bash,report_phase",
      "-e",
      "/x/agentport.ts",
    ]);
  });

  test("0.85: --approve and --session-id", () => {
    const argv = piArgv({ ...base, caps: caps85 });
    expect(argv.slice(0, 6)).toEqual(["pi", "--mode", "json", "--approve", "--session-id", "id-1"]);
    expect(argv).not.toContain("--session");
  });

  test("routes: the gateway prefix, unless direct, empty or already there", () => {
    expect(route("z-ai/glm", "openrouter", false)).toBe("openrouter/z-ai/glm");
    expect(route("z-ai/glm", "openrouter", true)).toBe("z-ai/glm");
    expect(route("openrouter/x", "openrouter", false)).toBe("openrouter/x");
    expect(route("standin/m", "", false)).toBe("standin/m");
  });
});

describe("the environment and the vault", () => {
  const dotenv = parseDotenv("# c\nexport API_KEY='k1'\nOTHER=\"o\"\nSHARED=from-file\nBAD LINE\nX=1 # note\n");
  test("parseDotenv", () => {
    expect(dotenv).toEqual({ API_KEY: "k1", OTHER: "o", SHARED: "from-file", X: "1" });
  });

  const files = [{ path: ".env", values: dotenv }];
  const allowed = new Set(["OTHER", "SHARED", "X"]);
  test("without a profile: .env fills in, the real environment wins", () => {
    const { env } = agentEnvironment({ real: { SHARED: "real", PATH: "/bin" }, files, allowed });
    expect(env).toMatchObject({ API_KEY: "k1", OTHER: "o", SHARED: "real", PATH: "/bin", X: "1" });
  });

  test("with a profile: the .env keys are withheld except the named ones", () => {
    const { env, missing } = agentEnvironment({ real: { SHARED: "real", PATH: "/bin" }, files, allowed, profile: ["API_KEY", "NOPE"] });
    expect(env.API_KEY).toBe("k1");
    expect(env.OTHER).toBeUndefined();
    expect(env.X).toBeUndefined();
    expect(env.SHARED).toBe("real");
    expect(missing).toEqual(["NOPE"]);
  });
});
