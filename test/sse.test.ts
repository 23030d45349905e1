// The SSE data framer (src/core/sse.ts) behind the bounded line framer: each
// event's data as one line, other fields read past, oversize events dropped
// whole and said once, a cut stream still delivering what came whole.
import { describe, expect, test } from "bun:test";
import { LineFramer, type LineSink } from "../src/core/frame.ts";
import { SseData } from "../src/core/sse.ts";

function feed(chunks: string[], max = 1024) {
  const lines: string[] = [];
  let oversize = 0;
  const sink: LineSink = { line: (t) => lines.push(t), oversize: () => (oversize += 1), framingError: () => {}, unterminated: () => {} };
  const sse = new SseData(sink, max);
  const framer = new LineFramer(sse, max);
  for (const c of chunks) framer.push(new TextEncoder().encode(c));
  framer.end();
  sse.end();
  return { lines, oversize };
}

describe("SseData", () => {
  test("one line per event, split anywhere across chunks; comments, event:, id: read past; CRLF too", () => {
    const { lines } = feed(['data: {"a":', '1}\n\n: ping\n\nevent: x\r\nid: 3\r\ndata:{"b":2}\r\n\r\n']);
    expect(lines).toEqual(['{"a":1}', '{"b":2}']);
  });

  test("several data lines of one event are joined with LF", () => {
    expect(feed(["data: one\ndata: two\n\n"]).lines).toEqual(["one\ntwo"]);
  });

  test("an event past the bound is dropped whole and said once; the next one arrives", () => {
    const big = "x".repeat(2000);
    const { lines, oversize } = feed([`data: ${big}\n\ndata: a\ndata: ${"y".repeat(600)}\ndata: ${"z".repeat(600)}\n\ndata: small\n\n`]);
    expect(lines).toEqual(["small"]);
    expect(oversize).toBe(2);
  });

  test("a stream cut inside an event still delivers its whole data lines", () => {
    expect(feed(['data: {"done":true}']).lines).toEqual(['{"done":true}']);
  });
});
