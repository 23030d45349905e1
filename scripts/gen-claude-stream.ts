/**
 * gen-claude-stream.ts — deterministic generator of a synthetic Claude Code
 * `--output-format stream-json --verbose` capture, for replay benchmarks.
 *
 * Run:
 *   bun run scripts/gen-claude-stream.ts --mb 200 --out /tmp/claude-200mb.jsonl [--seed 1] [--shape short|heavy]
 *   bun run scripts/gen-claude-stream.ts --big-line-mb 300 --out /tmp/claude-bigline.jsonl
 *
 * Normal mode writes a `system/init` record, then repeated agent turns
 * (optional `system/thinking_tokens` / `system/api_retry`, `assistant`
 * records with text / thinking / tool_use blocks for Read, Bash, Grep and
 * Edit, and `user` records carrying `tool_result` content from ~100 bytes to
 * ~64 KB (--shape heavy: 1 KB to 2 MB, so lines reach 4-7 MB: the content
 * and tool_use_result both carry it), some with is_error:true), and exactly one final `result` record
 * (subtype success). The record shapes mirror the captured fixtures in
 * /work/shared/fixtures/claude. The file is at least --mb MiB (it overshoots
 * by at most one turn).
 *
 * Big-line mode (--big-line-mb N) writes `system/init`, then ONE `user`
 * tool_result line of N MiB (including its LF), then a normal `result` line.
 * The huge string is streamed out in chunks, so the generator stays small.
 *
 * Output is deterministic for a given (mode, size, seed): a seeded PRNG
 * (mulberry32) drives every choice, and timestamps are synthetic. Every line
 * is one JSON value terminated by a single LF. Output is written through
 * Bun.file(out).writer() with periodic flushes, so memory stays bounded.
 * A one-line summary goes to stderr. MB here means MiB (2^20 bytes).
 */

import { parseArgs } from "node:util";

export const MIB = 1024 * 1024;
/** Bump when the output for a given (mode, size, seed) changes, so caches built by the bench scripts are invalidated. */
export const GENERATOR_VERSION = 1;

export interface GenStats {
  bytes: number;
  lines: number;
  turns: number;
  toolResults: number;
  errorResults: number;
  maxLineBytes: number;
  seconds: number;
}

/* ------------------------------------------------------------------ PRNG */

export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = (seed >>> 0) ^ 0x9e3779b9;
  }
  /** mulberry32: uniform uint32. */
  u32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** Uniform float in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)] as T;
  }
  hex(n: number): string {
    let s = "";
    while (s.length < n) s += this.u32().toString(16).padStart(8, "0");
    return s.slice(0, n);
  }
  uuid(): string {
    const h = this.hex(32);
    const variant = ((parseInt(h[16] ?? "0", 16) & 0x3) | 0x8).toString(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

/* --------------------------------------------------------------- content */

export const WORDS = [
  "agent",
  "buffer",
  "cache",
  "config",
  "cursor",
  "decode",
  "delta",
  "event",
  "frame",
  "handler",
  "index",
  "ledger",
  "limit",
  "line",
  "message",
  "module",
  "offset",
  "parser",
  "payload",
  "queue",
  "reader",
  "record",
  "reducer",
  "result",
  "retry",
  "schema",
  "session",
  "signal",
  "sink",
  "source",
  "state",
  "stream",
  "summary",
  "token",
  "tool",
  "usage",
  "verdict",
  "worker",
  "writer",
  "chunk",
  "error",
  "status",
  "output",
  "input",
  "request",
  "response",
  "timeout",
  "budget",
  "path",
  "file",
];
const TYPES = ["string", "number", "boolean", "Uint8Array", "Record<string, unknown>", "Verdict", "Frame", "unknown[]"];
export const DIRS = ["src/core", "src/io", "src/cli", "src/agents", "src/core/claude", "test", "scripts", "src/fake"];
export const EXTS = [".ts", ".ts", ".ts", ".test.ts", ".json", ".md"];
export const SENTENCES = [
  "Let me look at how the reader handles partial lines.",
  "I'll check the framing code before changing anything.",
  "The test fails because the buffer is never flushed at EOF.",
  "Now I'll run the test suite to confirm the fix.",
  "This looks like an off-by-one in the chunk boundary handling.",
  "Let me search for every caller of this function.",
  "The change is small: bound the line length and skip oversize records.",
  "I'll update the reducer so that retries are counted separately.",
  "All tests pass now. Let me double-check the edge case with CRLF input.",
  "Unicode check: naïve café — “quoted” ✓ 日本語 🚀.",
  'The error says "ENOENT"; the path must be wrong on Windows (C:\\Users\\dev).',
];
export const ERRORS = [
  "File does not exist. Note: your current working directory is /home/dev/project.",
  "<tool_use_error>String to replace not found in file.\nString: const limit = 8 * 1024 * 1024;</tool_use_error>",
  'Exit code 1\nerror: script "test" exited with code 1\n(fail) framing > skips oversize lines [3.21ms]\n  Expected: 1\n  Received: 0',
  "Exit code 2\nsrc/core/frame.ts(41,7): error TS2322: Type 'number | undefined' is not assignable to type 'number'.",
  "<tool_use_error>File has not been read yet. Read it first before writing to it.</tool_use_error>",
  "Command timed out after 2m 0.0s",
];

/** Deterministic pool of plausible source-code lines (includes quotes, backslashes, tabs, non-ASCII). */
export function buildCodePool(rng: Rng, n: number): string[] {
  const pool: string[] = [];
  const w = () => rng.pick(WORDS);
  const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
  for (let i = 0; i < n; i++) {
    const ind = "  ".repeat(rng.int(0, 3));
    switch (rng.int(0, 13)) {
      case 0:
        pool.push(`${ind}const ${w()}${cap(w())} = await ${w()}.${w()}(${w()}, "${w()}-${w()}");`);
        break;
      case 1:
        pool.push(`${ind}export function ${w()}${cap(w())}(${w()}: ${rng.pick(TYPES)}, ${w()}: ${rng.pick(TYPES)}): ${rng.pick(TYPES)} {`);
        break;
      case 2:
        pool.push(`${ind}if (${w()} === null || ${w()}.length > ${rng.int(1, 65536)}) return ${w()};`);
        break;
      case 3:
        pool.push(`${ind}// ${rng.pick(SENTENCES)}`);
        break;
      case 4:
        pool.push(`${ind}}`);
        break;
      case 5:
        pool.push("");
        break;
      case 6:
        pool.push(`${ind}const re = /^(\\d+)\\.(\\w+)\\s*"([^"]*)"$/u; // matches ${w()} ids`);
        break;
      case 7:
        pool.push(`${ind}throw new Error(\`${w()} failed: \${${w()}.message} (code \${${w()}.code})\`);`);
        break;
      case 8:
        pool.push(`${ind}for (let i = 0; i < ${w()}.length; i++) ${w()}[i] = ${w()}.${w()}(i);`);
        break;
      case 9:
        pool.push(`${ind}import { ${w()}, ${w()}${cap(w())} } from "../${rng.pick(DIRS).split("/").pop()}/${w()}.js";`);
        break;
      case 10:
        pool.push(
          `${ind}\t"${w()}": { "${w()}": ${rng.int(0, 9999)}, "${w()}": [${rng.int(0, 99)}, ${rng.int(0, 99)}], "path": "C:\\\\Users\\\\dev\\\\${w()}" },`,
        );
        break;
      case 11:
        pool.push(`${ind}log.debug("${w()} → ${w()} ✓ (${rng.int(1, 500)} ms)");`);
        break;
      case 12:
        pool.push(`${ind}return { ${w()}, ${w()}: ${w()} ?? ${rng.int(0, 100)}, ok: ${rng.chance(0.5)} };`);
        break;
      default:
        pool.push(`${ind}${w()}.${w()}(${w()}).${w()}((${w()}) => ${w()}.${w()} + ${rng.int(0, 9)});`);
        break;
    }
  }
  return pool;
}

/* ----------------------------------------------------------- the writer */

export class LineSink {
  bytes = 0;
  lines = 0;
  maxLineBytes = 0;
  private pending = 0;
  private readonly sink: ReturnType<ReturnType<typeof Bun.file>["writer"]>;
  constructor(out: string) {
    this.sink = Bun.file(out).writer({ highWaterMark: 1 * MIB });
  }
  /** Write one complete record (serialised here) followed by LF. */
  async record(obj: unknown): Promise<void> {
    const line = JSON.stringify(obj) + "\n";
    const n = Buffer.byteLength(line);
    this.sink.write(line);
    this.bytes += n;
    this.lines++;
    if (n > this.maxLineBytes) this.maxLineBytes = n;
    await this.maybeFlush(n);
  }
  /** Write a raw fragment (part of a line); the caller guarantees validity. */
  async raw(s: string, byteLen = Buffer.byteLength(s)): Promise<void> {
    this.sink.write(s);
    this.bytes += byteLen;
    await this.maybeFlush(byteLen);
  }
  /** Account for a line assembled via raw() fragments. */
  endLine(lineBytes: number): void {
    this.lines++;
    if (lineBytes > this.maxLineBytes) this.maxLineBytes = lineBytes;
  }
  private async maybeFlush(n: number): Promise<void> {
    this.pending += n;
    if (this.pending >= 4 * MIB) {
      this.pending = 0;
      await this.sink.flush();
    }
  }
  async close(): Promise<void> {
    await this.sink.flush();
    await this.sink.end();
  }
}

/* ---------------------------------------------------------- record kit */

const MODEL = "claude-opus-4-8";
const CWD = "/home/dev/project";
const TOOLS_LIST = ["Task", "Bash", "Edit", "Glob", "Grep", "NotebookEdit", "Read", "TodoWrite", "WebFetch", "WebSearch", "Write"];

class Session {
  readonly id: string;
  clock = Date.UTC(2026, 10, 29, 18, 0, 0);
  msg = 0;
  tool = 0;
  req = 0;
  inputTokens = 0;
  outputTokens = 0;
  cacheRead = 0;
  thinkingEstimate = 0;
  constructor(readonly rng: Rng) {
    this.id = rng.uuid();
  }
  tick(lo: number, hi: number): string {
    this.clock += this.rng.int(lo, hi);
    return new Date(this.clock).toISOString();
  }
  init(): Record<string, unknown> {
    return {
      type: "system",
      subtype: "init",
      cwd: CWD,
      session_id: this.id,
      tools: TOOLS_LIST,
      mcp_servers: [],
      model: `${MODEL}[1m]`,
      permissionMode: "bypassPermissions",
      slash_commands: ["compact", "config", "context", "init", "review", "usage"],
      apiKeySource: "ANTHROPIC_API_KEY",
      claude_code_version: "2.1.197",
      output_style: "default",
      agents: ["general-purpose", "Explore", "Plan"],
      skills: [],
      plugins: [],
      analytics_disabled: true,
      uuid: this.rng.uuid(),
      fast_mode_state: "off",
    };
  }
  assistant(msgId: string, reqId: string, content: unknown[], inputTokens: number): Record<string, unknown> {
    return {
      type: "assistant",
      message: {
        id: msgId,
        type: "message",
        role: "assistant",
        model: MODEL,
        content,
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: inputTokens,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: this.cacheRead,
          output_tokens: 1,
          service_tier: "standard",
        },
        context_management: null,
      },
      parent_tool_use_id: null,
      session_id: this.id,
      uuid: this.rng.uuid(),
      request_id: reqId,
    };
  }
  user(toolUseId: string, content: string, isError: boolean, toolUseResult: unknown): Record<string, unknown> {
    const block: Record<string, unknown> = { tool_use_id: toolUseId, type: "tool_result", content };
    if (isError) block.is_error = true;
    return {
      type: "user",
      message: { role: "user", content: [block] },
      parent_tool_use_id: null,
      session_id: this.id,
      uuid: this.rng.uuid(),
      timestamp: this.tick(20, 4000),
      tool_use_result: toolUseResult,
    };
  }
  thinkingTokens(delta: number): Record<string, unknown> {
    this.thinkingEstimate += delta;
    return {
      type: "system",
      subtype: "thinking_tokens",
      estimated_tokens: this.thinkingEstimate,
      estimated_tokens_delta: delta,
      uuid: this.rng.uuid(),
      session_id: this.id,
    };
  }
  apiRetry(attempt: number): Record<string, unknown> {
    const [status, error] = this.rng.pick([
      [529, "overloaded_error"],
      [500, "api_error"],
      [429, "rate_limit_error"],
    ] as const);
    return {
      type: "system",
      subtype: "api_retry",
      attempt,
      max_retries: 10,
      retry_delay_ms: 500 * 2 ** (attempt - 1) * (1 + this.rng.next() * 0.25),
      error_status: status,
      error,
      session_id: this.id,
      uuid: this.rng.uuid(),
    };
  }
  result(numTurns: number, resultText: string): Record<string, unknown> {
    const durationMs = this.clock - Date.UTC(2026, 10, 29, 18, 0, 0) + 1;
    const cost = Math.round((this.inputTokens * 5e-6 + this.outputTokens * 25e-6 + this.cacheRead * 0.5e-6) * 1e6) / 1e6;
    return {
      type: "result",
      subtype: "success",
      is_error: false,
      api_error_status: null,
      duration_ms: durationMs,
      duration_api_ms: Math.floor(durationMs * 0.7),
      num_turns: numTurns,
      result: resultText,
      stop_reason: "end_turn",
      session_id: this.id,
      total_cost_usd: cost,
      usage: {
        input_tokens: this.inputTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: this.cacheRead,
        output_tokens: this.outputTokens,
        server_tool_use: { web_search_requests: 0, web_fetch_requests: 0 },
        service_tier: "standard",
      },
      modelUsage: {
        [`${MODEL}[1m]`]: {
          inputTokens: this.inputTokens,
          outputTokens: this.outputTokens,
          cacheReadInputTokens: this.cacheRead,
          cacheCreationInputTokens: 0,
          webSearchRequests: 0,
          costUSD: cost,
          contextWindow: 1000000,
          maxOutputTokens: 64000,
        },
      },
      permission_denials: [],
      terminal_reason: "completed",
      fast_mode_state: "off",
      uuid: this.rng.uuid(),
    };
  }
}

/* ----------------------------------------------------------- tool calls */

interface ToolCall {
  use: { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };
  result: { content: string; isError: boolean; toolUseResult: unknown };
}

/**
 * The shape of the tool results. "short" (the default): ~100 bytes to ~64 KB,
 * mostly small. "heavy" (issue 16's corpora): 1 KB to 2 MB, a tail of big
 * file reads and logs, so the longest lines are 4-7 MB.
 */
export type Shape = "short" | "heavy";
export const SHAPES: readonly Shape[] = ["short", "heavy"];

/** The largest tool result a shape makes. */
export function resultCap(shape: Shape): number {
  return shape === "heavy" ? 2 * MIB : 64 * 1024;
}

/** Target size of a tool_result's content: mostly small, a tail of big file reads (cap: resultCap). */
export function resultSize(rng: Rng, shape: Shape = "short"): number {
  const r = rng.next();
  if (shape === "heavy") {
    if (r < 0.45) return rng.int(1024, 8 * 1024);
    if (r < 0.85) return rng.int(8 * 1024, 64 * 1024);
    if (r < 0.97) return rng.int(64 * 1024, 512 * 1024);
    return rng.int(512 * 1024, 2 * MIB - 8 * 1024);
  }
  if (r < 0.55) return rng.int(100, 1500);
  if (r < 0.85) return rng.int(1500, 12 * 1024);
  return rng.int(12 * 1024, 64 * 1024 - 512);
}

export function takeLines(rng: Rng, pool: string[], target: number, fmt: (line: string, i: number) => string, cap = 64 * 1024): string {
  const parts: string[] = [];
  let len = 0;
  let i = rng.int(0, pool.length - 1);
  let n = 1;
  while (len < target) {
    const s = fmt(pool[i] as string, n++);
    if (len + s.length + 1 > cap && parts.length > 0) break;
    parts.push(s);
    len += s.length + 1;
    i = (i + 1) % pool.length;
  }
  return parts.join("\n");
}

function makeToolCall(rng: Rng, s: Session, pool: string[], shape: Shape): ToolCall {
  const id = `toolu_${rng.hex(24)}`;
  const file = `${CWD}/${rng.pick(DIRS)}/${rng.pick(WORDS)}-${rng.pick(WORDS)}${rng.pick(EXTS)}`;
  const isError = rng.chance(0.08);
  const size = resultSize(rng, shape);
  const cap = resultCap(shape);
  const name = rng.pick(["Read", "Read", "Read", "Bash", "Bash", "Grep", "Edit"] as const);
  let input: Record<string, unknown>;
  let content: string;
  let toolUseResult: unknown;
  switch (name) {
    case "Read": {
      input = rng.chance(0.3) ? { file_path: file, offset: rng.int(1, 400), limit: rng.int(50, 2000) } : { file_path: file };
      const start = (input.offset as number | undefined) ?? 1;
      // Leave room for the "N\t" prefixes added below, so content stays under the cap.
      const body = takeLines(rng, pool, size, (l) => l, cap - cap / 10);
      content = body
        .split("\n")
        .map((l, k) => `${start + k}\t${l}`)
        .join("\n");
      const numLines = content.split("\n").length;
      toolUseResult = {
        type: "text",
        file: { filePath: file, content: body, numLines, startLine: start, totalLines: numLines + start + rng.int(0, 500) },
      };
      break;
    }
    case "Bash": {
      const cmd = rng.pick([
        `bun test ${rng.pick(DIRS)}/${rng.pick(WORDS)}.test.ts`,
        `git log --oneline -n ${rng.int(5, 200)}`,
        `rg -n "${rng.pick(WORDS)}" ${rng.pick(DIRS)}`,
        `ls -la ${rng.pick(DIRS)}`,
        `bunx tsc --noEmit 2>&1 | head -${rng.int(20, 400)}`,
      ]);
      input = { command: cmd, description: rng.pick(SENTENCES) };
      content = takeLines(
        rng,
        pool,
        size,
        (l, n) =>
          n % 7 === 0 ? `(pass) ${rng.pick(WORDS)} > ${rng.pick(WORDS)} [${(rng.next() * 20).toFixed(2)}ms]` : `${rng.hex(7)} ${l.trim()}`,
        cap,
      );
      toolUseResult = { stdout: content, stderr: "", interrupted: false, isImage: false, noOutputExpected: false };
      break;
    }
    case "Grep": {
      const pattern = `${rng.pick(WORDS)}\\w*\\(`;
      input = { pattern, path: `${CWD}/src`, output_mode: "content", "-n": true };
      content = takeLines(rng, pool, size, (l, n) => `${CWD}/${rng.pick(DIRS)}/${rng.pick(WORDS)}.ts:${n * 7}:${l}`, cap);
      toolUseResult = { mode: "content", numFiles: rng.int(1, 40), filenames: [], content, numLines: content.split("\n").length };
      break;
    }
    case "Edit": {
      const oldS = takeLines(rng, pool, rng.int(40, 1200), (l) => l);
      const newS = takeLines(rng, pool, rng.int(40, 1200), (l) => l);
      input = { file_path: file, old_string: oldS, new_string: newS, replace_all: false };
      content =
        `The file ${file} has been updated. Here's the result of running \`cat -n\` on a snippet of the edited file:\n` +
        takeLines(rng, pool, Math.min(size, 4000), (l, n) => `${n + 100}\t${l}`);
      toolUseResult = { filePath: file, oldString: oldS, newString: newS, userModified: false, replaceAll: false };
      break;
    }
  }
  if (isError) {
    content = rng.pick(ERRORS);
    toolUseResult = `Error: ${content}`;
  }
  s.tool++;
  return { use: { type: "tool_use", id, name, input }, result: { content, isError, toolUseResult } };
}

export function assistantText(rng: Rng): string {
  const n = rng.int(1, 4);
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(rng.pick(SENTENCES));
  return out.join(" ");
}

/* --------------------------------------------------------------- modes */

/** Normal mode: a realistic multi-turn stream of at least `mb` MiB. */
export async function generateStream(opts: { mb: number; out: string; seed?: number; quiet?: boolean; shape?: Shape }): Promise<GenStats> {
  const t0 = performance.now();
  const rng = new Rng(opts.seed ?? 1);
  const pool = buildCodePool(rng, 4096);
  const target = Math.floor(opts.mb * MIB);
  const sink = new LineSink(opts.out);
  const s = new Session(rng);
  let turns = 0;
  let toolResults = 0;
  let errorResults = 0;

  await sink.record(s.init());
  const reserve = 4096; // final assistant + result records
  while (sink.bytes + reserve < target) {
    turns++;
    const msgId = `msg_${rng.hex(24)}`;
    const reqId = `req_${rng.hex(24)}`;
    const ctx = 3000 + s.inputTokens / Math.max(turns, 1);
    if (rng.chance(0.015)) {
      const attempts = rng.int(1, 3);
      for (let a = 1; a <= attempts; a++) await sink.record(s.apiRetry(a));
    }
    if (rng.chance(0.3)) {
      const k = rng.int(1, 4);
      for (let j = 0; j < k; j++) await sink.record(s.thinkingTokens(rng.int(3, 60)));
    }
    const inTok = Math.floor(ctx) + rng.int(50, 4000);
    s.inputTokens += inTok;
    s.outputTokens += rng.int(20, 800);
    s.cacheRead += rng.int(0, 20000);
    if (rng.chance(0.1)) {
      await sink.record(
        s.assistant(
          msgId,
          reqId,
          [{ type: "thinking", thinking: assistantText(rng), signature: Buffer.from(rng.hex(48)).toString("base64") }],
          inTok,
        ),
      );
    }
    if (rng.chance(0.8)) await sink.record(s.assistant(msgId, reqId, [{ type: "text", text: assistantText(rng) }], inTok));
    const calls: ToolCall[] = [];
    const nCalls = rng.chance(0.7) ? 1 : rng.int(2, 3);
    for (let c = 0; c < nCalls; c++) {
      const call = makeToolCall(rng, s, pool, opts.shape ?? "short");
      calls.push(call);
      await sink.record(s.assistant(msgId, reqId, [call.use], inTok));
    }
    // Results may come back in a different order from the calls (as in the fixtures).
    if (calls.length > 1 && rng.chance(0.5)) calls.reverse();
    for (const call of calls) {
      await sink.record(s.user(call.use.id, call.result.content, call.result.isError, call.result.toolUseResult));
      toolResults++;
      if (call.result.isError) errorResults++;
    }
  }
  turns++;
  const finalText = `Done. ${assistantText(rng)}`;
  const msgId = `msg_${rng.hex(24)}`;
  await sink.record(s.assistant(msgId, `req_${rng.hex(24)}`, [{ type: "text", text: finalText }], 3000));
  s.tick(100, 2000);
  await sink.record(s.result(turns, finalText));
  await sink.close();
  const stats: GenStats = {
    bytes: sink.bytes,
    lines: sink.lines,
    turns,
    toolResults,
    errorResults,
    maxLineBytes: sink.maxLineBytes,
    seconds: (performance.now() - t0) / 1000,
  };
  if (!opts.quiet) report(opts.out, stats);
  return stats;
}

/** Big-line mode: init, ONE user tool_result line of `lineMb` MiB (LF included), result. */
export async function generateBigLine(opts: { lineMb: number; out: string; seed?: number; quiet?: boolean }): Promise<GenStats> {
  const t0 = performance.now();
  const rng = new Rng(opts.seed ?? 1);
  const pool = buildCodePool(rng, 4096);
  const sink = new LineSink(opts.out);
  const s = new Session(rng);
  await sink.record(s.init());

  const lineTarget = Math.floor(opts.lineMb * MIB);
  const toolId = `toolu_${rng.hex(24)}`;
  const prefix = JSON.stringify({
    type: "user",
    message: { role: "user", content: [{ tool_use_id: toolId, type: "tool_result", content: "" }] },
  }).slice(0, -5);
  const suffix = `"}]},"parent_tool_use_id":null,"session_id":${JSON.stringify(s.id)},"uuid":${JSON.stringify(rng.uuid())},"timestamp":${JSON.stringify(s.tick(10, 100))}}\n`;
  // prefix ends right after the opening quote of "content": "...
  if (!prefix.endsWith('"content":"')) throw new Error(`internal: bad prefix ${prefix}`);
  const prefixBytes = Buffer.byteLength(prefix);
  const suffixBytes = Buffer.byteLength(suffix);
  let lineBytes = 0;
  await sink.raw(prefix, prefixBytes);
  lineBytes += prefixBytes;

  // A few distinct ~1 MiB chunks of already-escaped JSON string text, cycled by the PRNG.
  // Each chunk is a complete escaped string body, so chunk boundaries never split an escape.
  const chunks: { text: string; bytes: number }[] = [];
  for (let k = 0; k < 8; k++) {
    const raw = takeLinesUnbounded(rng, pool, MIB - 4096) + "\n";
    const text = JSON.stringify(raw).slice(1, -1);
    chunks.push({ text, bytes: Buffer.byteLength(text) });
  }
  const room = () => lineTarget - lineBytes - suffixBytes;
  for (;;) {
    const c = rng.pick(chunks);
    if (c.bytes > room()) break;
    await sink.raw(c.text, c.bytes);
    lineBytes += c.bytes;
  }
  // Pad the tail with plain ASCII (no escapes, so any length is safe).
  const padUnit = "padding output line 0123456789 abcdefghijklmnopqrstuvwxyz ";
  let left = room();
  while (left > 0) {
    const n = Math.min(left, 64 * 1024);
    const pad = padUnit.repeat(Math.ceil(n / padUnit.length)).slice(0, n);
    await sink.raw(pad, n);
    lineBytes += n;
    left -= n;
  }
  await sink.raw(suffix, suffixBytes);
  lineBytes += suffixBytes;
  sink.endLine(lineBytes);

  s.inputTokens = 3200;
  s.outputTokens = 150;
  await sink.record(s.result(1, "Done. The command produced a very large output."));
  await sink.close();
  const stats: GenStats = {
    bytes: sink.bytes,
    lines: sink.lines,
    turns: 1,
    toolResults: 1,
    errorResults: 0,
    maxLineBytes: sink.maxLineBytes,
    seconds: (performance.now() - t0) / 1000,
  };
  if (!opts.quiet) report(opts.out, stats);
  return stats;
}

function takeLinesUnbounded(rng: Rng, pool: string[], target: number): string {
  const parts: string[] = [];
  let len = 0;
  let i = rng.int(0, pool.length - 1);
  while (len < target) {
    const l = pool[i] as string;
    parts.push(l);
    len += l.length + 1;
    i = (i + 1) % pool.length;
  }
  return parts.join("\n");
}

function report(out: string, st: GenStats): void {
  console.error(
    `gen-claude-stream: wrote ${out}: ${(st.bytes / MIB).toFixed(1)} MiB (${st.bytes} bytes), ${st.lines} lines, ` +
      `${st.turns} turns, ${st.toolResults} tool_results (${st.errorResults} errors), max line ${(st.maxLineBytes / 1024).toFixed(1)} KiB, ` +
      `${st.seconds.toFixed(1)} s`,
  );
}

/* ----------------------------------------------------------------- CLI */

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      mb: { type: "string" },
      "big-line-mb": { type: "string" },
      out: { type: "string" },
      seed: { type: "string", default: "1" },
      shape: { type: "string", default: "short" },
      help: { type: "boolean", short: "h" },
    },
  });
  const usage = "usage: bun run scripts/gen-claude-stream.ts (--mb N | --big-line-mb N) --out FILE [--seed S] [--shape short|heavy]";
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const out = values.out;
  const seed = Number(values.seed);
  const shape = values.shape as Shape;
  if (!out || !Number.isFinite(seed) || !SHAPES.includes(shape)) {
    console.error(usage);
    process.exit(2);
  }
  if (values["big-line-mb"] !== undefined) {
    const lineMb = Number(values["big-line-mb"]);
    if (!(lineMb > 0)) {
      console.error(`--big-line-mb must be > 0\n${usage}`);
      process.exit(2);
    }
    await generateBigLine({ lineMb, out, seed });
  } else {
    const mb = Number(values.mb ?? "200");
    if (!(mb > 0)) {
      console.error(`--mb must be > 0\n${usage}`);
      process.exit(2);
    }
    await generateStream({ mb, out, seed, shape });
  }
}
