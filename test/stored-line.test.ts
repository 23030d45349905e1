// stream.jsonl keeps the agent's stdout with secrets replaced by value and by
// shape; a line that redaction would leave unparsable becomes a marker record,
// so `agentport replay` of the kept stream never meets a broken line of ours.
import { expect, test } from "bun:test";
import { REDACTED_MARKER, storedLine } from "../src/io/run-folder.ts";

test("a shaped secret inside a record is replaced and the record stays JSON", () => {
  const line = JSON.stringify({ type: "assistant", text: "curl -H 'Authorization: Bearer abcdefghijklmnop1234' https://x.invalid" });
  const kept = storedLine(line);
  expect(kept).not.toContain("abcdefghijklmnop1234");
  expect(JSON.parse(kept).type).toBe("assistant");
});

test("a shape that would swallow a quote and break the record: a marker naming the size instead", () => {
  const line = '{"type":"x","a":"ftp://u:p","b":{"c":"@"}}';
  const kept = storedLine(line);
  expect(JSON.parse(kept)).toEqual({ type: REDACTED_MARKER, bytes: line.length });
});

test("a line with nothing to redact is kept byte for byte, a non-JSON line too", () => {
  for (const line of ['{"type":"result","result":"All done."}', "not json at all"]) expect(storedLine(line)).toBe(line);
});
