// Fuzz: 100,000 random and mutated lines into each line consumer, through the
// bounded framer exactly as the driver feeds them:
//   - the claude reducer (then decide),
//   - the pi json-mode reducer (then judgePi and decide),
//   - the RPC client's stdout line handler (PiRpcClient.line, then its judge).
// Lines are captured fixture records mutated (wrong types in every field,
// deleted and extra keys, deep nesting, huge and odd numbers, long strings,
// ANSI/control/U+2028 text, __proto__ keys), broken as text (truncated JSON,
// invalid UTF-8, flipped bytes, random bytes, CR, BOM) and split into random
// chunks, some under a small --max-line-bytes. Nothing may throw; every
// stream ends in a verdict that passes VerdictSchema, and a failed one names
// its failure. The PRNG is seeded (FUZZ_SEED overrides), so a failure
// reproduces: it prints the seed, the stream number and the offending lines.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Rng } from "../scripts/gen-claude-stream.ts";
import { ClaudeReducer } from "../src/core/claude/reducer.ts";
import { parseBudgetOptions } from "../src/core/budget.ts";
import { compileSchema, defaultEnvelopeJsonSchema, envelopeFromTool } from "../src/core/envelope.ts";
import { LineFramer, type LineSink } from "../src/core/frame.ts";
import { judge } from "../src/core/judge.ts";
import type { ProcessOutcome, StoppedBy } from "../src/core/outcome.ts";
import { ENVELOPE_TOOL, PiReducer } from "../src/core/pi/reducer.ts";
import { unmetRequirement } from "../src/core/pi/requirements.ts";
import { MAX_DETAIL_CHARS, MAX_TOOL_CHARS, PROGRESS_FIELDS, PROGRESS_KINDS, type ProgressEvent } from "../src/core/progress.ts";
import type { Reducer } from "../src/core/reduction.ts";
import { Supervisor } from "../src/core/supervisor.ts";
import { EXIT, exitCodeFor, STATUSES, VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { RpcTurns } from "../src/rpc/turns.ts";
import { CommandQueue } from "../src/rpc/queue.ts";
import type { RpcTurn } from "../src/rpc/turn.ts";
import { ROOT } from "./helpers.ts";

const SEED = Number(process.env.FUZZ_SEED ?? 20261129);
const LINES_PER_TARGET = Number(process.env.FUZZ_LINES ?? 100_000);

type Json = Record<string, unknown>;

/* ------------------------------------------------------------- corpus */

/** The JSON-object lines of every fixture, file by file (in order). */
function fixtureFiles(dir: string): string[][] {
  const files: string[][] = [];
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .sort()) {
    const out: string[] = [];
    for (const line of readFileSync(join(dir, f), "utf8").split("\n")) {
      if (!line.trim()) continue;
      try {
        const v = JSON.parse(line);
        if (v !== null && typeof v === "object" && !Array.isArray(v)) out.push(line);
      } catch {
        // a captured non-JSON line (--output-format text): skip, the mutators make plenty
      }
    }
    if (out.length > 0) files.push(out);
  }
  return files;
}

const CLAUDE_FILES = fixtureFiles(join(ROOT, "test", "fixtures", "claude"));
const PI_FILES = fixtureFiles(join(ROOT, "test", "fixtures", "pi"));
const RPC_EXTRA = [
  {
    type: "response",
    id: "ap-1",
    command: "get_state",
    success: true,
    data: { sessionId: "s", sessionFile: "/tmp/s.jsonl", isStreaming: false, messageCount: 2 },
  },
  { type: "response", command: "prompt", success: false, error: "Unknown command" },
  { type: "response", id: "ap-2", command: "abort", success: true },
  { type: "extension_ui_request", id: "ui-1", method: "confirm", title: "Delete everything?", message: "y/N" },
  { type: "extension_ui_request", id: "ui-2", method: "select", title: "Pick", options: ["a", "b"] },
  { type: "extension_ui_request", id: "ui-3", method: "notify", message: "hello" },
  { type: "agent_settled" },
  { type: "compaction_start", reason: "threshold" },
  { type: "compaction_end", willRetry: true },
  { type: "auto_retry_end", success: false, attempt: 3, finalError: "boom" },
].map((r) => JSON.stringify(r));

const CLAUDE_TYPES = ["system", "assistant", "user", "result", "stream_event", "rate_limit_event", "control_request", ""];
const PI_TYPES = [
  "session",
  "agent_start",
  "agent_end",
  "turn_start",
  "turn_end",
  "message_start",
  "message_update",
  "message_end",
  "tool_execution_start",
  "tool_execution_update",
  "tool_execution_end",
  "auto_retry_start",
  "auto_retry_end",
  "compaction_start",
  "compaction_end",
  "entry_appended",
  "queue_update",
  "agent_settled",
  "response",
  "extension_ui_request",
];
const KEYS = [
  "type",
  "subtype",
  "is_error",
  "result",
  "errors",
  "usage",
  "input_tokens",
  "output_tokens",
  "total_cost_usd",
  "session_id",
  "message",
  "content",
  "tool_use_id",
  "id",
  "name",
  "input",
  "model",
  "permission_denials",
  "api_error_status",
  "num_turns",
  "role",
  "stopReason",
  "errorMessage",
  "provider",
  "toolCallId",
  "toolName",
  "args",
  "isError",
  "details",
  "entry",
  "customType",
  "data",
  "extensions",
  "pi_version",
  "cost",
  "total",
  "cacheRead",
  "attempt",
  "maxAttempts",
  "success",
  "method",
  "title",
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
];

/* ------------------------------------------------------------ values */

const DEEP = "\u0000DEEP:";
const RAW = "\u0000RAW:";
const RAW_NUMBERS = [
  "123456789012345678901234567890123456789",
  "-9007199254740993",
  "9007199254740993",
  "1e400",
  "-1e400",
  "1e-400",
  "-0",
  "0.1e1",
  "1E+2",
  "1.7976931348623157e308",
  "5e-324",
  "0.000000000000000000000001",
  "18446744073709551616",
];
const NASTY_TEXT = [
  "\u001b[31mred\u001b[0m",
  "\u001b]0;title\u0007",
  "a\u2028b\u2029c",
  "\u0000nul",
  "tab\there",
  "line\nbreak",
  "\r\n",
  "\ud83d\ude80",
  "\ud800",
  "\udfff",
  "\ufeffbom",
  "C:\\Users\\dev\\x",
  "../../../../etc/passwd",
  "%s%n%x",
  "${jndi:x}",
  "\u202eevil",
  "ﬁ",
  "é",
  "\u0085nel",
];

function randomString(rng: Rng): string {
  const r = rng.next();
  if (r < 0.3) return rng.pick(NASTY_TEXT);
  if (r < 0.5) return rng.pick(KEYS);
  if (r < 0.51) return rng.chance(0.02) ? "x".repeat(rng.int(100_000, 1_000_000)) : "x".repeat(rng.int(1000, 20_000));
  if (r < 0.56) return "";
  let s = "";
  const n = rng.int(1, 40);
  for (let i = 0; i < n; i++) s += String.fromCharCode(rng.chance(0.8) ? rng.int(32, 126) : rng.int(0, 0xffff));
  return s;
}

function randomValue(rng: Rng, depth = 0): unknown {
  const r = rng.int(0, 17);
  switch (r) {
    case 0:
      return null;
    case 1:
      return rng.chance(0.5);
    case 2:
      return rng.int(-5, 5);
    case 3:
      return rng.int(0, 2 ** 31);
    case 4:
      return rng.next() * 1e6 - 5e5;
    case 5:
      return Number.MAX_SAFE_INTEGER + rng.int(1, 10);
    case 6:
      return rng.pick([1e308, -1e308, 1e15, 1e15 + 1, 0.1 + 0.2, -0, 2 ** 53]);
    case 7:
      return `${RAW}${rng.pick(RAW_NUMBERS)}`;
    case 8:
    case 9:
      return randomString(rng);
    case 10:
      return depth > 3 ? [] : Array.from({ length: rng.int(0, 4) }, () => randomValue(rng, depth + 1));
    case 11: {
      if (depth > 3) return {};
      const o: Json = {};
      for (let i = rng.int(0, 4); i > 0; i--) o[rng.pick(KEYS)] = randomValue(rng, depth + 1);
      return o;
    }
    case 12:
      return `${DEEP}${rng.chance(0.05) ? rng.pick([20_000, 100_000]) : rng.pick([10, 50, 500, 3_000])}:${rng.chance(0.5) ? "[" : "{"}`;
    case 13:
      return rng.pick(CLAUDE_TYPES.concat(PI_TYPES));
    case 14:
      return rng.pick([
        "success",
        "error_max_turns",
        "error_during_execution",
        "init",
        "api_retry",
        "thinking_tokens",
        "permission_denied",
        "assistant",
        "toolResult",
        "user",
      ]);
    case 15:
      return {
        type: rng.pick(["text", "tool_use", "tool_result", "thinking", "toolCall"]),
        text: randomString(rng),
        id: randomString(rng),
        name: randomString(rng),
        input: randomValue(rng, depth + 1),
      };
    case 16:
      return [{ type: "text", text: randomString(rng) }];
    default:
      return { input: randomValue(rng, depth + 1), output: randomValue(rng, depth + 1), cost: { total: randomValue(rng, depth + 1) } };
  }
}

/** Every (container, key) in a JSON tree, bounded. */
function slots(root: unknown): [Json | unknown[], string | number][] {
  const out: [Json | unknown[], string | number][] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0 && out.length < 2000) {
    const node = stack.pop();
    if (Array.isArray(node))
      node.forEach((v, i) => {
        out.push([node, i]);
        stack.push(v);
      });
    else if (node !== null && typeof node === "object")
      for (const [k, v] of Object.entries(node)) {
        out.push([node as Json, k]);
        stack.push(v);
      }
  }
  return out;
}

function deepText(n: number, open: string): string {
  return open === "[" ? "[".repeat(n) + "]".repeat(n) : '{"a":'.repeat(n) + "1" + "}".repeat(n);
}

/** Serialize, turning the sentinels into raw numbers and deep nesting. */
function serialize(value: unknown): string {
  let text = JSON.stringify(value);
  if (text.includes("\\u0000DEEP:") || text.includes("\\u0000RAW:")) {
    text = text
      .replace(/"\\u0000DEEP:(\d+):([[{])"/g, (_m, n: string, open: string) => deepText(Number(n), open))
      .replace(/"\\u0000RAW:([^"]+)"/g, (_m, raw: string) => raw);
  }
  return text;
}

/**
 * A line as bytes: `template` (else a random corpus line) mutated as JSON with
 * probability `mutate`, then, when `breakage`, perhaps broken as text.
 */
function makeLine(rng: Rng, corpus: string[], types: string[], template: string | null, mutate: number, breakage: boolean): Uint8Array {
  const r = breakage ? rng.next() : 0.08 + rng.next() * 0.92;
  if (r < 0.04) {
    // random bytes
    const n = rng.int(0, 300);
    const b = new Uint8Array(n);
    for (let i = 0; i < n; i++) b[i] = rng.int(0, 255);
    return b.map((x) => (x === 10 ? 32 : x)); // no LF: one line
  }
  if (r < 0.07) return enc.encode(serialize(randomValue(rng)));
  if (r < 0.08)
    return enc.encode(rng.pick(["", " ", "\t", "\r", "null", "[]", "{}", '"type"', "42", "true", '{"type":null}', '{"type":{}}']));
  const record = JSON.parse(template ?? rng.pick(corpus)) as Json;
  if (rng.chance(mutate)) {
    const mutations = rng.int(1, 4);
    for (let m = 0; m < mutations; m++) {
      const k = rng.int(0, 9);
      const all = slots(record);
      if (k <= 4 && all.length > 0) {
        const [container, key] = rng.pick(all);
        (container as Record<string | number, unknown>)[key] = randomValue(rng);
      } else if (k === 5 && all.length > 0) {
        const [container, key] = rng.pick(all);
        if (Array.isArray(container)) container.splice(key as number, 1);
        else delete (container as Json)[key as string];
      } else if (k === 6) {
        record.type = rng.chance(0.7) ? rng.pick(types) : randomValue(rng);
      } else if (k === 7) {
        record[rng.pick(KEYS)] = randomValue(rng);
      } else if (k === 8) {
        const objects = all
          .map(([c, key]) => (c as Record<string | number, unknown>)[key])
          .filter((v): v is Json => v !== null && typeof v === "object" && !Array.isArray(v));
        if (objects.length > 0) rng.pick(objects)[rng.pick(KEYS)] = randomValue(rng);
      } else {
        // same shape, every scalar of one kind swapped for another type
        for (const [container, key] of all) {
          const v = (container as Record<string | number, unknown>)[key];
          if (v === null || typeof v !== "object")
            if (rng.chance(0.3)) (container as Record<string | number, unknown>)[key] = randomValue(rng, 4);
        }
      }
    }
  }
  let text = serialize(record);
  if (rng.chance(0.03))
    text = text.replace(
      /^\{/,
      rng.pick([
        '{"__proto__":{"type":"result","is_error":false},',
        '{"type":"result","type":"assistant",',
        '{"constructor":{"prototype":1},',
      ]),
    );
  let bytes: Uint8Array = enc.encode(text);
  if (!breakage) return bytes;
  const t = rng.next();
  if (t < 0.03)
    bytes = bytes.subarray(0, rng.int(0, bytes.length)); // truncated JSON
  else if (t < 0.05)
    bytes = splice(bytes, rng.int(0, bytes.length), rng.pick(BAD_UTF8)); // invalid UTF-8
  else if (t < 0.06) {
    bytes = bytes.slice();
    for (let i = rng.int(1, 4); i > 0 && bytes.length > 0; i--) {
      const at = rng.int(0, bytes.length - 1);
      const x = rng.int(0, 255);
      bytes[at] = x === 10 ? 0 : x;
    }
  } else if (t < 0.07)
    bytes = splice(bytes, bytes.length, enc.encode("\r")); // CRLF
  else if (t < 0.075) bytes = splice(bytes, 0, new Uint8Array([0xef, 0xbb, 0xbf])); // BOM
  return bytes;
}

const enc = new TextEncoder();
const BAD_UTF8 = [
  new Uint8Array([0xff]),
  new Uint8Array([0xc3]),
  new Uint8Array([0xc0, 0xaf]),
  new Uint8Array([0xed, 0xa0, 0x80]),
  new Uint8Array([0xf4, 0x90, 0x80, 0x80]),
  new Uint8Array([0xe2, 0x82]),
  new Uint8Array([0x80, 0x80]),
  new Uint8Array([0xf0, 0x9f, 0x98]),
];

function splice(bytes: Uint8Array, at: number, insert: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length + insert.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(insert, at);
  out.set(bytes.subarray(at), at + insert.length);
  return out;
}

/* ------------------------------------------------------------ checks */

const STDERR_TAILS = [
  "",
  "Error: connect ECONNREFUSED 127.0.0.1:443",
  "401 Unauthorized: invalid x-api-key sk-ant-api03-abcdef",
  "\u001b[31m429 Too Many Requests\u001b[0m",
  "getaddrinfo ENOTFOUND api.anthropic.com",
  "spawn ENOENT",
];
const STOPS: (StoppedBy | null)[] = [
  null,
  null,
  null,
  null,
  null,
  null,
  null,
  null,
  null,
  null,
  null,
  null,
  "timeout",
  "stall",
  "budget",
  "loop",
  "interrupt",
  "linger",
  "internal",
];

function randomProcess(rng: Rng): ProcessOutcome {
  const signal = rng.chance(0.15) ? rng.pick(["SIGKILL", "SIGTERM", "SIGSEGV"]) : null;
  return {
    exitCode: signal !== null ? null : rng.pick([0, 0, 0, 1, 2, 137, null]),
    signal,
    stoppedBy: rng.pick(STOPS),
    stopReason: rng.chance(0.5) ? "timed out after 1 s" : undefined,
    stderrTail: rng.pick(STDERR_TAILS),
    spawnError: rng.chance(0.03) ? rng.pick(["not_found", "not_executable", "spawn_failed"] as const) : undefined,
  };
}

const EXIT_CODES = new Set<number>(Object.values(EXIT));

/** The typed-verdict contract; returns what is wrong, or null. */
function badVerdict(v: Verdict): string | null {
  const parsed = VerdictSchema.safeParse(v);
  if (!parsed.success) return `VerdictSchema: ${parsed.error.issues[0]?.path.join(".")}: ${parsed.error.issues[0]?.message}`;
  if (!STATUSES.includes(v.status)) return `status ${v.status}`;
  if (v.ok !== (v.status === "completed")) return `ok ${v.ok} with status ${v.status}`;
  if (!v.ok && (v.failure === null || v.failure.message.length === 0)) return `failed verdict without a failure (status ${v.status})`;
  if (v.ok && v.failure !== null) return "ok verdict with a failure";
  if (v.failure !== null && v.failure.message.length > 600) return `failure of ${v.failure.message.length} chars`;
  if (v.failure !== null && (v.failure.kind === "stopped") !== (v.failure.cause !== undefined))
    return `failure kind ${v.failure.kind} with cause ${v.failure.cause}`;
  if (!Object.isFrozen(v) || !Object.isFrozen(v.summary)) return "a verdict that can be patched";
  if (!EXIT_CODES.has(exitCodeFor(v))) return `exit code ${exitCodeFor(v)}`;
  for (const [k, val] of Object.entries(v.summary))
    if (typeof val === "string" && val.length > 400) return `summary.${k} of ${val.length} chars`;
  for (const r of v.refused) if (r.subject.length > 160) return `refused subject of ${r.subject.length} chars`;
  JSON.stringify(v);
  return null;
}

function badEvent(e: ProgressEvent): string | null {
  if (!(PROGRESS_KINDS as readonly string[]).includes(e.kind)) return `progress kind ${String(e.kind)}`;
  const extra = Object.keys(e).find((k) => k !== "kind" && !(PROGRESS_FIELDS as readonly string[]).includes(k));
  if (extra !== undefined) return `progress field ${extra}`;
  if (
    e.tool !== undefined &&
    (typeof e.tool !== "string" || e.tool.length > MAX_TOOL_CHARS || /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(e.tool))
  )
    return `progress tool ${JSON.stringify(e.tool).slice(0, 100)}`;
  if (
    e.detail !== undefined &&
    (typeof e.detail !== "string" || e.detail.length > MAX_DETAIL_CHARS || /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u001b]/.test(e.detail))
  )
    return `progress detail ${JSON.stringify(e.detail).slice(0, 100)}`;
  const count = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
  if (e.thinking_tokens !== undefined && !count(e.thinking_tokens)) return `progress thinking_tokens ${e.thinking_tokens}`;
  if (e.tokens === undefined || (e.tokens !== null && !Object.values(e.tokens).every(count)))
    return `progress tokens ${JSON.stringify(e.tokens)}`;
  if (e.cost_micro_usd === undefined || (e.cost_micro_usd !== null && !count(e.cost_micro_usd))) return `progress cost ${e.cost_micro_usd}`;
  return null;
}

/* ------------------------------------------------------------ driving */

interface Stream {
  lines: Uint8Array[];
  crlf: boolean;
  terminated: boolean;
  maxLineBytes: number;
}

/**
 * Three kinds of stream: a captured fixture in order with a few lines
 * mutated (the reducer gets deep, many runs complete); random corpus lines,
 * mutated but valid JSON; and anything, text breakage included.
 */
function makeStream(rng: Rng, files: string[][], types: string[], first: string | null): Stream {
  const corpus = files.flat();
  const lines: Uint8Array[] = [];
  const kind = rng.next();
  if (kind < 0.4) {
    const file = rng.pick(files);
    const rate = rng.pick([0, 0.05, 0.15, 0.5]);
    const breakage = rng.chance(0.2);
    for (const template of file) lines.push(makeLine(rng, corpus, types, template, rate, breakage && rng.chance(0.1)));
  } else {
    const n = rng.int(1, 60);
    const breakage = kind >= 0.8;
    if (first !== null && rng.chance(0.8)) lines.push(enc.encode(first));
    while (lines.length < n) lines.push(makeLine(rng, corpus, types, null, 0.6, breakage));
  }
  return {
    lines,
    crlf: rng.chance(0.05),
    terminated: rng.chance(0.95),
    maxLineBytes: rng.pick([8 * 1024 * 1024, 8 * 1024 * 1024, 8 * 1024 * 1024, 100_000, 4096, 512]),
  };
}

function streamBytes(s: Stream): Uint8Array {
  const sep = s.crlf ? enc.encode("\r\n") : enc.encode("\n");
  let size = 0;
  for (const l of s.lines) size += l.length + sep.length;
  const out = new Uint8Array(size);
  let at = 0;
  for (const l of s.lines) {
    out.set(l, at);
    at += l.length;
    out.set(sep, at);
    at += sep.length;
  }
  return s.terminated ? out : out.subarray(0, out.length - sep.length);
}

/** Chunk sizes for one stream: mostly pipe-like, sometimes tiny (every boundary case), on small streams only. */
function chunker(rng: Rng, total: number): () => number {
  if (total < 16 * 1024 && rng.chance(0.15)) return () => rng.int(1, 16);
  const max = rng.pick([4096, 65536, 262144]);
  return () => rng.int(1, max);
}

/** Push in random chunks, with the driver's supervision between them. */
function pushChunks(rng: Rng, framer: LineFramer, bytes: Uint8Array, between: () => void): void {
  const size = chunker(rng, bytes.length);
  let at = 0;
  while (at < bytes.length) {
    const n = size();
    framer.push(bytes.subarray(at, Math.min(bytes.length, at + n)));
    between();
    at += n;
  }
}

interface Failure {
  stream: number;
  error: string;
  lines: string[];
}

function describeFailure(f: Failure, target: string): string {
  return `${target} stream #${f.stream} (FUZZ_SEED=${SEED}): ${f.error}\n  lines:\n${f.lines.map((l) => `    ${l.slice(0, 300)}`).join("\n")}`;
}

const dec = new TextDecoder("utf-8", { fatal: false });

function supervise(rng: Rng): { sup: Supervisor; tick: (r: Reducer) => void } {
  const budget = rng.chance(0.3)
    ? parseBudgetOptions({ maxTokens: String(rng.int(1, 100_000)), budget: rng.pick(["warn", "enforce"]) })
    : null;
  const sup = new Supervisor({
    timeoutMs: 60_000,
    stallMs: 60_000,
    budget: budget?.ok ? budget.options : null,
    loopRepeat: rng.pick([null, 2, 5]),
  });
  let t = 0;
  sup.start({ mono: 0, wall: 0 });
  return {
    sup,
    tick: (r) => {
      t += 1;
      const now = { mono: t, wall: t };
      sup.usage(r.liveTokens(), now);
      sup.takeWarning();
      sup.activity(now);
      sup.check(now);
    },
  };
}

/** One target: feed streams until `LINES_PER_TARGET` lines went in; collect what escaped. */
async function fuzz(
  target: string,
  seedOffset: number,
  run: (rng: Rng, stream: Stream, bytes: Uint8Array, events: ProgressEvent[]) => Verdict[] | Promise<Verdict[]>,
  files: string[][],
  types: string[],
  first: string | null,
): Promise<{ lines: number; bytes: number; streams: number; failures: Failure[]; statuses: Map<string, number>; seconds: number }> {
  const rng = new Rng(SEED + seedOffset);
  const failures: Failure[] = [];
  const statuses = new Map<string, number>();
  const started = performance.now();
  let lines = 0;
  let bytes = 0;
  let streams = 0;
  while (lines < LINES_PER_TARGET) {
    const stream = makeStream(rng, files, types, first);
    lines += stream.lines.length;
    streams += 1;
    const events: ProgressEvent[] = [];
    const fail = (error: string) => {
      if (failures.length < 5) failures.push({ stream: streams, error, lines: stream.lines.map((l) => dec.decode(l)) });
    };
    try {
      const data = streamBytes(stream);
      bytes += data.length;
      const verdicts = await run(rng, stream, data, events);
      for (const v of verdicts) {
        const bad = badVerdict(v);
        if (bad !== null) fail(`bad verdict: ${bad}`);
        statuses.set(v.status, (statuses.get(v.status) ?? 0) + 1);
      }
      for (const e of events) {
        const bad = badEvent(e);
        if (bad !== null) {
          fail(`bad progress event: ${bad}`);
          break;
        }
      }
    } catch (error) {
      fail(`threw: ${(error as Error)?.stack ?? String(error)}`);
    }
  }
  return { lines, bytes, streams, failures, statuses, seconds: (performance.now() - started) / 1000 };
}

const envelopeCheck = (() => {
  const c = compileSchema(defaultEnvelopeJsonSchema());
  if (!c.ok) throw new Error(c.error);
  return c.check;
})();

/* -------------------------------------------------- the RPC client, no process */

type ClientInternals = RpcTurns & { queue: CommandQueue };

/**
 * The RPC client's line path without a process: the router of its lines
 * (responses, dialogs, turns) with a queue whose writes go nowhere.
 */
function processlessClient(events: ProgressEvent[], _maxLineBytes: number, settles: boolean): ClientInternals {
  const queue = new CommandQueue({ write: () => true, timeoutMs: 3_600_000, onWriteFailed: () => {} });
  const turns = new RpcTurns(
    { cwd: "/tmp/fuzz", envelopeTool: ENVELOPE_TOOL, settles, onProgress: (e: ProgressEvent) => events.push(e) },
    { queue, command: (c) => queue.send(c), write: () => true, kill: () => {}, busy: () => false },
  );
  return Object.assign(turns, { queue });
}

function clearCommands(c: ClientInternals, turns: RpcTurn[]): void {
  c.queue.fail(new Error("fuzz: done"), () => new Error("fuzz: done"));
  for (const t of turns) t.close();
}

/* --------------------------------------------------------------- tests */

const escaped: unknown[] = [];
const onRejection = (reason: unknown) => escaped.push(reason);
beforeAll(() => process.on("unhandledRejection", onRejection));
afterAll(() => process.off("unhandledRejection", onRejection));

const report = (target: string, r: Awaited<ReturnType<typeof fuzz>>) =>
  console.error(
    `fuzz ${target}: ${r.lines} lines (${(r.bytes / 1048576).toFixed(0)} MiB) in ${r.streams} streams, ${r.seconds.toFixed(1)} s; verdicts ${[...r.statuses].map(([s, n]) => `${s} ${n}`).join(", ")}`,
  );

describe(`fuzz (seed ${SEED}, ${LINES_PER_TARGET} lines per target)`, () => {
  test("the claude reducer, through the framer, then decide", async () => {
    const init = JSON.stringify({
      type: "system",
      subtype: "init",
      session_id: "00000000-0000-4000-8000-000000000001",
      model: "claude-fuzz",
      cwd: "/tmp/fuzz",
    });
    const r = await fuzz(
      "claude",
      1,
      (rng, stream, bytes, events) => {
        const { sup, tick } = supervise(rng);
        const reducer = new ClaudeReducer({ cwd: "/tmp/fuzz", emit: (e) => events.push(e), loop: sup.loop });
        const framer = new LineFramer(reducer, stream.maxLineBytes);
        pushChunks(rng, framer, bytes, () => {
          tick(reducer);
          reducer.settled();
        });
        framer.end();
        reducer.streamEnded();
        return [judge({ agent: "claude", reduction: reducer.reduction(), proc: randomProcess(rng) }).verdict];
      },
      CLAUDE_FILES,
      CLAUDE_TYPES,
      init,
    );
    report("claude", r);
    expect(r.failures.map((f) => describeFailure(f, "claude"))).toEqual([]);
    expect(r.lines).toBeGreaterThanOrEqual(LINES_PER_TARGET);
  });

  test("the pi reducer (json mode), through the framer, then judgePi and decide", async () => {
    const header = JSON.stringify({
      type: "session",
      version: 3,
      id: "01a22897-4cfc-73e8-9b59-d9f7beecc642",
      timestamp: "2026-11-29T18:35:34.013Z",
      cwd: "/tmp/fuzz",
    });
    const r = await fuzz(
      "pi",
      2,
      (rng, stream, bytes, events) => {
        const { sup, tick } = supervise(rng);
        const reducer = new PiReducer({
          cwd: "/tmp/fuzz",
          emit: (e) => events.push(e),
          loop: sup.loop,
          expectHeader: rng.chance(0.9),
          onHeader: () => {},
        });
        const framer = new LineFramer(reducer, stream.maxLineBytes);
        pushChunks(rng, framer, bytes, () => tick(reducer));
        framer.end();
        reducer.streamEnded();
        const reading = reducer.reduction();
        const requirements = { requireExt: rng.chance(0.2) ? ["agentport"] : [], route: rng.chance(0.3) ? "standin/standin-model" : null };
        const check = rng.chance(0.3) ? envelopeCheck : null;
        const { verdict } = judge({
          agent: "pi",
          reduction: reading,
          proc: { ...randomProcess(rng), finishedAtStop: rng.chance(0.5) },
          requirement: unmetRequirement(reading, requirements),
          envelope: { check, delivered: envelopeFromTool(ENVELOPE_TOOL, reading.envelope, reading.envelopeError), nudges: rng.int(0, 2) },
        });
        return [verdict];
      },
      PI_FILES,
      PI_TYPES,
      header,
    );
    report("pi", r);
    expect(r.failures.map((f) => describeFailure(f, "pi"))).toEqual([]);
    expect(r.lines).toBeGreaterThanOrEqual(LINES_PER_TARGET);
  });

  test("the RPC client's stdout line handler (turns, barriers, responses, dialogs), then its judge", async () => {
    const r = await fuzz(
      "rpc",
      3,
      async (rng, stream, bytes, events) => {
        const client = processlessClient(events, stream.maxLineBytes, rng.chance(0.5));
        const sink: LineSink = {
          line: (text) => client.line(text),
          oversize: (limit) => client.turn?.reducer.oversize(limit),
          framingError: (what) => client.turn?.reducer.framingError(what),
          unterminated: (text) => client.line(text),
        };
        const framer = new LineFramer(sink, stream.maxLineBytes);
        const turns: RpcTurn[] = [];
        const options = {
          envelope: rng.chance(0.3) ? envelopeCheck : null,
          requireExt: rng.chance(0.2) ? ["agentport"] : [],
          route: rng.chance(0.3) ? "standin/standin-model" : null,
        };
        // Most streams start inside a turn; some lines arrive between turns.
        if (rng.chance(0.9)) turns.push(client.openTurn());
        try {
          const size = chunker(rng, bytes.length);
          let at = 0;
          while (at < bytes.length) {
            const n = size();
            framer.push(bytes.subarray(at, Math.min(bytes.length, at + n)));
            at += n;
            // Let barrier responses settle, as the event loop would between reads.
            if (rng.chance(0.05)) await Promise.resolve();
            if (client.turn === null && rng.chance(0.3)) turns.push(client.openTurn());
          }
          framer.end();
          await Promise.resolve();
          await Promise.resolve();
          return turns.map((t) => t.judge({ ...options, inventory: null, sessionId: "fuzz-session" }));
        } finally {
          clearCommands(client, turns);
        }
      },
      PI_FILES.map((f) => f.filter((l) => !l.startsWith('{"type":"session"'))).concat([RPC_EXTRA]),
      PI_TYPES,
      null,
    );
    report("rpc", r);
    expect(r.failures.map((f) => describeFailure(f, "rpc"))).toEqual([]);
    expect(escaped.map((e) => String((e as Error)?.stack ?? e))).toEqual([]);
    expect(r.lines).toBeGreaterThanOrEqual(LINES_PER_TARGET);
  });
});
