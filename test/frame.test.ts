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
