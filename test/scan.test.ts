// The record scanner against JSON.parse: the same records, the same verdicts
// on bad input, and the same digests whether a record was scanned or parsed,
// on every captured fixture (test/fixtures, /work/shared/fixtures).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ClaudeReducer } from "../src/core/claude/reducer.ts";
import { CLAUDE_PLAN } from "../src/core/claude/plan.ts";
import { Digested, SKIPPED, digest, stringHash } from "../src/core/digest.ts";
import { LineFramer } from "../src/core/frame.ts";
import type { LoopObserver } from "../src/core/loop.ts";
import { ENVELOPE_TOOL, PiReducer } from "../src/core/pi/reducer.ts";
import { piPlan } from "../src/core/pi/plan.ts";
import { parseRecord } from "../src/core/record.ts";
import { RecordScanner } from "../src/core/scan.ts";
import { ROOT } from "./helpers.ts";

const enc = new TextEncoder();
const SHARED = "/work/shared/fixtures";

function fixtures(agent: "claude" | "pi"): string[] {
  const dirs = [join(ROOT, "test", "fixtures", agent), join(SHARED, agent)].filter((d) => existsSync(d));
  return dirs.flatMap((d) =>
    readdirSync(d)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => join(d, f)),
  );
}

/** Every loop call in order: what the loop detector would be told. */
function recorder(): { calls: string[]; loop: LoopObserver } {
  const calls: string[] = [];
  return {
    calls,
    loop: {
      action: (tool, fingerprint) => calls.push(`action ${tool} ${fingerprint}`),
      retry: () => calls.push("retry"),
      turn: (textDigest) => calls.push(`turn ${textDigest ?? "-"}`),
    },
  };
}

/** Reduce `bytes` with every line parsed (threshold: never) or every line scanned (threshold 0). */
function reduce(agent: "claude" | "pi", bytes: Uint8Array, scanned: boolean) {
  const { calls, loop } = recorder();
  const reducer = agent === "pi" ? new PiReducer({ loop }) : new ClaudeReducer({ loop });
  const framer = new LineFramer(reducer, undefined, { bigLineBytes: scanned ? 0 : Infinity });
  // Uneven chunks: lines cross chunk boundaries and land in the held buffer.
  for (let at = 0, size = 1; at < bytes.length; at += size, size = (size * 7 + 3) % 4096 || 1) framer.push(bytes.subarray(at, at + size));
  framer.end();
  reducer.streamEnded();
  return { calls, reduction: reducer.reduction() };
}

describe("the scanner reads what JSON.parse reads", () => {
  const keep = new RecordScanner("keep");
  const same = (text: string) => {
    const scanned = keep.scan(enc.encode(text), true);
    expect(scanned).toEqual(parseRecord(text));
    if (scanned.ok) expect(Object.keys(scanned.record)).toEqual(Object.keys((parseRecord(text) as { record: object }).record));
  };

  test("escapes, astral and lone surrogates, numbers, literals, nesting, odd keys", () => {
    same(String.raw`{"type":"a","s":"q\"b\\s\/\b\f\n\r\t\u0041\u00e9\ud83d\ude00\ud800x","e":"é€😀"}`);
    same(`{"type":"n","a":[0,-0,1.5,-2e-3,1E+21,123456789012345678901234567890,0.1,[],{}],"t":true,"f":false,"z":null}`);
    same(`  {"type" : "ws" ,\t"a" : [ 1 , 2 ] }\r `);
    same(`{"type":"p","__proto__":{"x":1},"constructor":2,"10":3,"2":4}`);
    same(`{"type":"d","a":1,"a":2}`);
    same(`{"type":"deep","v":${"[".repeat(300)}${"]".repeat(300)}}`);
  });

  test("bad input gets JSON.parse's verdict", () => {
    for (const text of [
      `{"type":"a",}`,
      `{"type":"a" "b":1}`,
      `{"type":"a","b":[1,]}`,
      `{"type":"a","b":"raw\ttab"}`,
      `{"type":"a","b":"\\x"}`,
      `{"type":"a","b":"\\u12g4"}`,
      `{"type":"a","b":01}`,
      `{"type":"a","b":1.}`,
      `{"type":"a","b":tru}`,
      `{"type":"a"} x`,
      `{"type":"a"`,
      `\uFEFF{"type":"a"}`,
      `[1,2]`,
      `"type"`,
      `{"type":1}`,
      `{}`,
      ``,
    ])
      same(text);
  });

  test("a repeated switch key with another value is JSON.parse's record, whatever the plan", () => {
    const text = `{"type":"user","message":{"content":[{"type":"tool_result","content":"x"}]},"type":"result","result":"ok"}`;
    expect(new RecordScanner(CLAUDE_PLAN).scan(enc.encode(text), true)).toEqual(parseRecord(text));
  });
});

describe("mutated records: the scanner never accepts what JSON.parse rejects", () => {
  test("3,000 deterministic mutations of fixture lines", () => {
    const lines = [...fixtures("claude"), ...fixtures("pi")]
      .flatMap((file) => readFileSync(file, "utf8").split("\n"))
      .filter((line) => line.length > 20 && parseRecord(line).ok)
      .slice(0, 300);
    expect(lines.length).toBeGreaterThan(100);
    const keep = new RecordScanner("keep");
    const planned = [new RecordScanner(CLAUDE_PLAN), new RecordScanner(piPlan(ENVELOPE_TOOL))];
    const decoder = new TextDecoder("utf-8", { fatal: true });
    const inserts = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x09, 0x01, 0x30, 0x2d, 0x65, 0x75, 0x20];
    let seed = 7;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
    let rejected = 0;
    for (let k = 0; k < 3000; k++) {
      const bytes = [...enc.encode(lines[k % lines.length]!)];
      const at = Math.floor(next() * bytes.length);
      const how = next();
      if (how < 0.4) bytes.splice(at, 1);
      else if (how < 0.8) bytes.splice(at, 0, inserts[Math.floor(next() * inserts.length)]!);
      else bytes[at] = inserts[Math.floor(next() * inserts.length)]!;
      const mutated = Uint8Array.from(bytes);
      let text: string;
      try {
        text = decoder.decode(mutated);
      } catch {
        continue; // the framer's UTF-8 check comes first
      }
      const record = parseRecord(text);
      if (!record.ok) rejected += 1;
      expect(keep.scan(mutated, true)).toEqual(record);
      for (const scanner of planned) expect(scanner.scan(mutated, true).ok).toBe(record.ok);
    }
    // The mutations did break records, so the check above is not vacuous.
    expect(rejected).toBeGreaterThan(500);
  });
});

describe("a string hashed from its bytes has the digest of the parsed string", () => {
  test("every kind of character and escape", () => {
    const scanner = new RecordScanner({ fields: { v: "digest" } });
    for (const value of ["", "plain", "é€😀 mixed", "\u2028\u2029", 'q"\\/\b\f\n\r\t\u0001', "\ud800 lone", "x".repeat(100_000)]) {
      const text = JSON.stringify({ type: "t", v: value });
      const scanned = scanner.scan(enc.encode(text), true);
      if (!scanned.ok) throw new Error(scanned.why);
      expect(scanned.record.v).toBeInstanceOf(Digested);
      expect((scanned.record.v as Digested).hash).toBe(stringHash(value));
      expect(digest({ a: [scanned.record.v] })).toBe(digest({ a: [value] }));
    }
  });

  test("\\u escapes hash as the units they stand for", () => {
    const scanner = new RecordScanner({ fields: { v: "digest" } });
    const scanned = scanner.scan(enc.encode(String.raw`{"type":"t","v":"\u00e9\ud83d\ude00\u002F"}`), true);
    if (!scanned.ok) throw new Error(scanned.why);
    expect((scanned.record.v as Digested).hash).toBe(stringHash("é😀/"));
  });
});

for (const agent of ["claude", "pi"] as const) {
  describe(`${agent}: every fixture, scanned or parsed`, () => {
    const files = fixtures(agent);
    test("there are fixtures", () => {
      expect(files.length).toBeGreaterThan(agent === "claude" ? 40 : 10);
    });
    const plan = agent === "pi" ? piPlan(ENVELOPE_TOOL) : CLAUDE_PLAN;
    for (const file of files) {
      test(file.replace(`${ROOT}/`, ""), () => {
        const bytes = readFileSync(file);
        const parsed = reduce(agent, bytes, false);
        const scanned = reduce(agent, bytes, true);
        // The same loop digests and fingerprints, in the same order, and the same reduction.
        expect(scanned.calls).toEqual(parsed.calls);
        expect(scanned.reduction).toEqual(parsed.reduction);
        // And the scanner vouched for every JSON line itself.
        const scanner = new RecordScanner(plan);
        const keep = new RecordScanner("keep");
        for (const line of bytes.toString("utf8").split("\n")) {
          if (line.trim() === "") continue;
          const record = parseRecord(line);
          const before = keep.fallbacks + scanner.fallbacks;
          expect(keep.scan(enc.encode(line), true)).toEqual(record);
          expect(scanner.scan(enc.encode(line), true).ok).toBe(record.ok);
          if (record.ok) expect(keep.fallbacks + scanner.fallbacks).toBe(before);
        }
      });
    }
  });
}

describe("a record the claude reducer does not read", () => {
  test("is checked, not built: its members are skipped, and the reduction is the parsed one", () => {
    const big = "x".repeat(1 << 20);
    const record = JSON.stringify({ type: "agent_end", messages: [{ role: "assistant", content: [{ type: "text", text: big }] }] });
    const scanned = new RecordScanner(CLAUDE_PLAN).scan(enc.encode(record), true);
    expect(scanned.ok).toBe(true);
    if (!scanned.ok) return;
    expect(scanned.record.type).toBe("agent_end");
    expect(scanned.record.messages).toBe(SKIPPED); // not the array with its 1 MiB text
    // Broken JSON inside a skipped member is still JSON.parse's verdict.
    expect(new RecordScanner(CLAUDE_PLAN).scan(enc.encode(record.replace('"role"', "'role'")), true).ok).toBe(false);
    const stream = enc.encode(`${record}\n${JSON.stringify({ type: "system", subtype: "init", session_id: "s1", model: "m" })}\n`);
    expect(reduce("claude", stream, true).reduction).toEqual(reduce("claude", stream, false).reduction);
  });
});

describe("a record the pi reducer does not read", () => {
  test("is checked, not built: its members are skipped, and the reduction is the parsed one", () => {
    const big = "y".repeat(1 << 20);
    const record = JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "tool_result", content: big }] } });
    const scanned = new RecordScanner(piPlan(ENVELOPE_TOOL)).scan(enc.encode(record), true);
    expect(scanned.ok).toBe(true);
    if (!scanned.ok) return;
    expect(scanned.record.type).toBe("user");
    expect(scanned.record.message).toBe(SKIPPED);
    // A record it reads a field of is kept.
    const retry = new RecordScanner(piPlan(ENVELOPE_TOOL)).scan(
      enc.encode(JSON.stringify({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, errorMessage: big })),
      true,
    );
    expect(retry.ok && retry.record.attempt).toBe(1);
    const stream = enc.encode(`${JSON.stringify({ type: "session", id: "p1", cwd: "/w" })}\n${record}\n`);
    expect(reduce("pi", stream, true).reduction).toEqual(reduce("pi", stream, false).reduction);
  });
});
