import { describe, expect, test } from "bun:test";
import { LineFramer, type LineSink } from "../src/core/frame.ts";

function collect(max = 1024) {
  const lines: string[] = [];
  const oversize: number[] = [];
  const errors: string[] = [];
  const tails: string[] = [];
  const sink: LineSink = {
    line: (t) => lines.push(t),
    oversize: (n) => oversize.push(n),
    framingError: (w) => errors.push(w),
    unterminated: (t) => tails.push(t),
  };
  return { lines, oversize, errors, tails, framer: new LineFramer(sink, max) };
}

const enc = new TextEncoder();

describe("LineFramer", () => {
  test("LF is the only delimiter; one trailing CR is stripped", () => {
    const c = collect();
    c.framer.push(enc.encode("a\r\nb\rc\nd\r\r\n\n"));
    c.framer.end();
    expect(c.lines).toEqual(["a", "b\rc", "d\r", ""]);
    expect(c.errors).toEqual([]);
  });

  test("U+2028 and U+2029 never split a line", () => {
    const c = collect();
    c.framer.push(enc.encode('{"t":"x\u2028y\u2029z"}\n'));
    c.framer.end();
    expect(c.lines).toEqual(['{"t":"x\u2028y\u2029z"}']);
  });

  test("a UTF-8 character split across chunks decodes whole, at every split point", () => {
    const text = "é€😀 ok";
    const bytes = enc.encode(`${text}\n`);
    for (let cut = 1; cut < bytes.length; cut++) {
      const c = collect();
      c.framer.push(bytes.slice(0, cut));
      c.framer.push(bytes.slice(cut));
      c.framer.end();
      expect(c.lines).toEqual([text]);
    }
  });

  test("one byte at a time gives the same lines", () => {
    const c = collect();
    for (const b of enc.encode("one\ntwo\r\nthree\n")) c.framer.push(Uint8Array.of(b));
    c.framer.end();
    expect(c.lines).toEqual(["one", "two", "three"]);
  });

  test("an unterminated last line is handed over as such (the sink decides whether it is whole)", () => {
    const c = collect();
    c.framer.push(enc.encode('ok\n{"type":"res'));
    c.framer.end();
    expect(c.lines).toEqual(["ok"]);
    expect(c.tails).toEqual(['{"type":"res']);
    expect(c.errors).toEqual([]);
  });

  test("an unterminated last line that is not UTF-8 is a framing error", () => {
    const c = collect();
    c.framer.push(Uint8Array.of(0x6f, 0x6b, 0x0a, 0x61, 0xff));
    c.framer.end();
    expect(c.tails).toEqual([]);
    expect(c.errors).toEqual(["the last line has no LF and is not valid UTF-8 (2 bytes)"]);
  });

  test("invalid UTF-8 is a framing error naming it", () => {
    const c = collect();
    c.framer.push(Uint8Array.of(0x61, 0xff, 0x0a, 0x62, 0x0a));
    c.framer.end();
    expect(c.errors).toEqual(["a line is not valid UTF-8"]);
    expect(c.lines).toEqual(["b"]);
  });

  test("20,000 empty lines are 20,000 lines", () => {
    const c = collect();
    c.framer.push(new Uint8Array(20_000).fill(0x0a));
    c.framer.end();
    expect(c.lines.length).toBe(20_000);
    expect(c.lines.every((l) => l === "")).toBe(true);
  });

  test("a line over the bound is skipped and reported, inside one chunk and across chunks", () => {
    const c = collect(8);
    c.framer.push(enc.encode("12345678\n123456789\nshort\n1234"));
    c.framer.push(enc.encode("56789 and more"));
    c.framer.push(enc.encode(" still\nafter\n"));
    c.framer.end();
    expect(c.lines).toEqual(["12345678", "short", "after"]);
    expect(c.oversize).toEqual([8, 8]);
    expect(c.framer.stats.oversize).toBe(2);
  });

  test("an oversize unterminated last line is reported as both", () => {
    const c = collect(4);
    c.framer.push(enc.encode("ok\n0123456789"));
    c.framer.end();
    expect(c.lines).toEqual(["ok"]);
    expect(c.oversize).toEqual([4]);
    expect(c.errors).toEqual(["the last line has no LF and is past the per-line bound"]);
  });

  test("a 100 MB line is skipped with flat memory", () => {
    const c = collect(8 * 1024 * 1024);
    const chunk = new Uint8Array(1024 * 1024).fill(0x78);
    Bun.gc(true);
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 100; i++) c.framer.push(chunk);
    c.framer.push(enc.encode("\nnext\n"));
    c.framer.end();
    Bun.gc(true);
    const grown = process.memoryUsage().rss - before;
    expect(c.oversize.length).toBe(1);
    expect(c.lines).toEqual(["next"]);
    // At most the 8 MiB bound is ever held; 100 MB held whole would show.
    expect(grown).toBeLessThan(40 * 1024 * 1024);
  });

  test("rejects a bound that is not a positive integer", () => {
    const sink: LineSink = { line() {}, oversize() {}, framingError() {}, unterminated() {} };
    expect(() => new LineFramer(sink, 0)).toThrow(RangeError);
  });
});

describe("LineFramer: big lines as bytes", () => {
  function collectBig(bigLineBytes: number, max = 1024) {
    const lines: string[] = [];
    const big: string[] = [];
    const errors: string[] = [];
    const sink: LineSink = {
      line: (t) => lines.push(t),
      // A copy: the bytes are the framer's, valid only during the call.
      bigLine: (b) => big.push(new TextDecoder().decode(b.slice())),
      oversize: () => errors.push("oversize"),
      framingError: (w) => errors.push(w),
      unterminated: (t) => lines.push(t),
    };
    return { lines, big, errors, framer: new LineFramer(sink, max, { bigLineBytes }) };
  }

  test("lines from the threshold up come as bytes without LF or trailing CR; shorter ones as text", () => {
    const c = collectBig(8);
    c.framer.push(enc.encode("short\r\n12345678\r\nlonger line here\n1234567\n"));
    c.framer.end();
    expect(c.lines).toEqual(["short", "1234567"]);
    expect(c.big).toEqual(["12345678", "longer line here"]);
    expect(c.errors).toEqual([]);
  });

  test("a big line that is not UTF-8 is a framing error, whatever the check", () => {
    for (const isUtf8 of [undefined, () => false]) {
      const errors: string[] = [];
      const sink: LineSink = {
        line() {},
        bigLine: () => errors.push("delivered"),
        oversize() {},
        framingError: (w) => errors.push(w),
        unterminated() {},
      };
      const framer = new LineFramer(sink, 1024, { bigLineBytes: 4, ...(isUtf8 ? { isUtf8 } : {}) });
      framer.push(Uint8Array.of(0x61, 0x62, 0xc3, 0x28, 0x63, 0x0a));
      framer.push(enc.encode(isUtf8 ? "valid\n" : "\u00e9t\u00e9 ok\n"));
      expect(errors).toEqual(
        isUtf8 ? ["a line is not valid UTF-8", "a line is not valid UTF-8"] : ["a line is not valid UTF-8", "delivered"],
      );
    }
  });

  test("every way of cutting the stream into chunks gives the same lines (the held buffer is reused)", () => {
    const records = Array.from({ length: 60 }, (_, i) => `${i}:${"é€x".repeat((i * 37) % 300)}`);
    const bytes = enc.encode(records.join("\n") + "\n");
    for (const size of [1, 7, 64, 1000, bytes.length]) {
      const c = collectBig(200, 4096);
      for (let at = 0; at < bytes.length; at += size) c.framer.push(bytes.slice(at, at + size));
      c.framer.end();
      const all = [...c.lines, ...c.big].sort();
      expect(all).toEqual([...records].sort());
      expect(c.big.length).toBeGreaterThan(20);
      expect(c.errors).toEqual([]);
    }
  });
});
