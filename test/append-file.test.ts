// The run folder's record files (src/io/append-file.ts): batched, yet every
// record whole, in order, byte for byte; out by the next turn of the event
// loop and at exit; a failed write stops the recording, never the caller;
// a limit ends a file with one marker record, and the run reads on.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { closeRecordFile, recordFile } from "../src/io/append-file.ts";
import {
  PROGRESS_CUT_MARKER,
  RUN_FILES,
  STREAM_CUT_MARKER,
  appendVerdictRecord,
  recordingProgress,
  recordingStream,
} from "../src/io/run-folder.ts";
import { ClaudeReducer } from "../src/core/claude/reducer.ts";
import { LineFramer } from "../src/core/frame.ts";
import { ROOT, tempDir } from "./helpers.ts";

const dir = tempDir("agentport-append-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("records of every size and script come out whole and in order, across the buffer's edges", () => {
  const path = join(dir, "mixed.jsonl");
  const expected: string[] = [];
  const encoder = new TextEncoder();
  // 64 KiB is the buffer: sizes around it, a third of it (the encodeInto bound), multi-byte characters split at the edge.
  const sizes = [1, 100, 21_845, 21_846, 32_767, 32_768, 32_769, 65_535, 65_536, 65_537, 200_000, 3, 0, 5];
  for (const [i, size] of sizes.entries()) {
    const unit = ["a", "é", "€", "😀"][i % 4]!;
    const text = unit.repeat(Math.ceil(size / unit.length)).slice(0, size - (size % unit.length)); // whole characters
    expected.push(text);
    recordFile(path).line(i % 3 === 0 ? encoder.encode(text) : text);
  }
  closeRecordFile(path);
  expect(readFileSync(path, "utf8")).toBe(expected.map((t) => `${t}\n`).join(""));
  expect(statSync(path).mode & 0o777).toBe(0o600);
});

test("what is written goes out by the next turn of the event loop, before the file is closed", async () => {
  const path = join(dir, "turn.jsonl");
  recordFile(path).line("first");
  expect(existsSync(path)).toBe(true); // created on first use: `follow` finds it
  expect(readFileSync(path, "utf8")).toBe(""); // batched: nothing yet
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  expect(readFileSync(path, "utf8")).toBe("first\n");
  closeRecordFile(path);
});

test("closing writes out what is pending; the next use opens the file again and appends", () => {
  const path = join(dir, "reopen.jsonl");
  recordFile(path).line("one");
  closeRecordFile(path);
  recordFile(path).line("two");
  closeRecordFile(path);
  closeRecordFile(path); // closing a closed file is nothing
  expect(readFileSync(path, "utf8")).toBe("one\ntwo\n");
});

test("a record file that cannot be written stops recording and never throws", () => {
  // /dev/full takes the open and fails every write with ENOSPC.
  const full = recordFile("/dev/full");
  expect(() => {
    full.line("x".repeat(70_000));
    for (let i = 0; i < 1000; i++) full.line("more");
    full.flush();
  }).not.toThrow();
  closeRecordFile("/dev/full");
  const missing = join(dir, "no", "such", "folder.jsonl");
  expect(() => recordFile(missing).line("lost")).not.toThrow();
  closeRecordFile(missing);
  expect(existsSync(missing)).toBe(false);
});

test("a process that exits at once still leaves every record it wrote", async () => {
  const path = join(dir, "exit.jsonl");
  const script = `
    import { recordFile } from ${JSON.stringify(join(ROOT, "src/io/append-file.ts"))};
    for (let i = 0; i < 3000; i++) recordFile(${JSON.stringify(path)}).line(JSON.stringify({ i }));
    process.exit(3);
  `;
  const child = Bun.spawn([process.execPath, "-e", script], { stdout: "ignore", stderr: "pipe" });
  expect(await child.exited).toBe(3);
  const lines = readFileSync(path, "utf8").trimEnd().split("\n");
  expect(lines.length).toBe(3000);
  expect(JSON.parse(lines.at(-1)!)).toEqual({ i: 2999 });
});

test("a limit ends the file with its last record once it holds that many bytes, and stays ended", () => {
  const path = join(dir, "limited.jsonl");
  const limit = { maxBytes: 1000, last: '{"type":"cut"}' };
  for (let i = 0; i < 100; i++) recordFile(path, limit).line(JSON.stringify({ i, pad: "p".repeat(40) }));
  closeRecordFile(path);
  const lines = readFileSync(path, "utf8").trimEnd().split("\n");
  expect(lines.at(-1)).toBe('{"type":"cut"}');
  expect(lines.filter((l) => l === '{"type":"cut"}').length).toBe(1);
  // Past the limit by at most the record that reached it, and the marker.
  expect(statSync(path).size).toBeLessThan(1000 + 60 + 16);
  expect(lines.slice(0, -1).every((l) => JSON.parse(l).pad.length === 40)).toBe(true);
});

test("a stream past its limit: stream.jsonl is cut with a marker, and the reducer still reads every line", () => {
  const runDir = tempDir("agentport-cut-");
  try {
    const reducer = new ClaudeReducer({});
    const recording = recordingStream(runDir, reducer, null, 4096);
    const framer = new LineFramer(recording);
    const text = (i: number) =>
      JSON.stringify({
        type: "assistant",
        message: { id: `m${i}`, role: "assistant", content: [{ type: "text", text: `line ${i} ${"w".repeat(200)}` }] },
        session_id: "s1",
      });
    for (let i = 0; i < 200; i++) framer.push(new TextEncoder().encode(`${text(i)}\n`));
    framer.push(
      new TextEncoder().encode(
        `${JSON.stringify({ type: "result", subtype: "success", is_error: false, result: "done", session_id: "s1", total_cost_usd: 0.01, usage: { input_tokens: 1, output_tokens: 1 } })}\n`,
      ),
    );
    framer.end();
    recording.streamEnded();
    const stored = readFileSync(join(runDir, RUN_FILES.stream), "utf8").trimEnd().split("\n");
    expect(JSON.parse(stored.at(-1)!)).toEqual({ type: STREAM_CUT_MARKER, max_bytes: 4096 });
    expect(stored.length).toBeLessThan(40);
    // The run goes on: the reduction saw the result after the cut.
    expect(reducer.reduction().text).toBe("done");
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
});

test("progress past its limit: progress.ndjson is cut with one marker, the events still reach the sink, and the verdict record still ends the file", () => {
  const runDir = tempDir("agentport-progress-cut-");
  try {
    let seen = 0;
    const sink = recordingProgress(runDir, { sessionId: "s1", agent: "claude" }, () => void seen++, 4096);
    for (let i = 0; i < 500; i++) sink({ kind: "tool_started", tool: "Read", detail: `file-${i}.txt` });
    appendVerdictRecord(runDir, { kind: "verdict", session_id: "s1", agent: "claude", status: "completed", exit_code: 0 });
    const path = join(runDir, RUN_FILES.progress);
    const records = readFileSync(path, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(seen).toBe(500);
    expect(records.filter((r) => r.kind === PROGRESS_CUT_MARKER)).toEqual([{ kind: PROGRESS_CUT_MARKER, max_bytes: 4096 }]);
    expect(records.at(-2).kind).toBe(PROGRESS_CUT_MARKER);
    expect(records.at(-1).kind).toBe("verdict");
    expect(statSync(path).size).toBeLessThan(4096 + 400);
  } finally {
    rmSync(runDir, { recursive: true, force: true });
  }
});
