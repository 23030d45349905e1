/**
 * gen-pi-stream.ts — deterministic generator of a synthetic `pi --mode json`
 * event stream (pi 0.73.1), for replay benchmarks.
 *
 * Run:
 *   bun run scripts/gen-pi-stream.ts --mb 200 --out /tmp/pi-200mb.jsonl [--seed 1] [--shape short|heavy]
 *
 * One prompt, many turns, shaped as the captured fixtures in
 * test/fixtures/pi: the `session` header; agent_start; the user message
 * (message_start/message_end); then per turn turn_start, the assistant
 * message streamed as message_start, message_update events (thinking_*,
 * text_start/text_delta/text_end, toolcall_start/toolcall_delta/toolcall_end,
 * each carrying the partial message twice, as pi does: in
 * assistantMessageEvent.partial and in message), message_end with usage and
 * cost; per tool call tool_execution_start, tool_execution_update (bash),
 * tool_execution_end, the toolResult message (message_start/message_end);
 * turn_end with the assistant message and its tool results. Tools: read,
 * bash, edit, write; results from ~100 bytes to ~64 KB (--shape heavy: 1 KB
 * to 2 MB), some isError.
 * Occasionally a failed attempt (stopReason "error") followed by
 * auto_retry_start/auto_retry_end. The last turn answers with text only
 * (stopReason "stop"), then agent_end.
 *
 * One deviation: real pi puts EVERY message of the prompt in agent_end, a
 * line as long as the whole conversation (it would be past any line bound on
 * a 200 MB stream); here agent_end carries the newest messages up to ~1 MiB
 * (~6 MiB with --shape heavy), so the benchmark measures throughput, not one
 * skipped line.
 *
 * Output is deterministic for a given (size, seed): the seeded PRNG of
 * gen-claude-stream.ts drives every choice and timestamps are synthetic. The
 * file is at least --mb MiB (it overshoots by one turn and the capped
 * agent_end at most). MB means MiB.
 */

import { parseArgs } from "node:util";
import {
  DIRS,
  ERRORS,
  EXTS,
  LineSink,
  MIB,
  Rng,
  SENTENCES,
  WORDS,
  assistantText,
  buildCodePool,
  SHAPES,
  resultCap,
  resultSize,
  takeLines,
  type GenStats,
  type Shape,
} from "./gen-claude-stream.ts";

/** Bump when the output for a given (size, seed) changes, so bench caches are invalidated. */
export const PI_GENERATOR_VERSION = 1;

type Json = Record<string, unknown>;

const CWD = "/home/dev/project";
const PROVIDER = "openrouter";
const MODEL = "anthropic/claude-sonnet-4.5";
const API = "openai-completions";

interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
}

const ZERO: Usage = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

function usage(input: number, output: number, cacheRead: number): Usage {
  const cost = { input: input * 3e-6, output: output * 15e-6, cacheRead: cacheRead * 0.3e-6, cacheWrite: 0, total: 0 };
  cost.total = cost.input + cost.output + cost.cacheRead;
  return { input, output, cacheRead, cacheWrite: 0, totalTokens: input + output + cacheRead, cost };
}

/** `text` cut into `k` deltas. */
function deltas(rng: Rng, text: string, maxK: number): string[] {
  const k = Math.max(1, Math.min(text.length, rng.int(1, maxK)));
  const out: string[] = [];
  let at = 0;
  for (let i = 0; i < k; i++) {
    const end = i === k - 1 ? text.length : Math.min(text.length, at + Math.ceil((text.length - at) / (k - i)));
    out.push(text.slice(at, end));
    at = end;
  }
  return out;
}

class PiSession {
  clock = Date.UTC(2026, 10, 29, 18, 0, 0);
  readonly id: string;
  private responses = 0;
  private calls = 0;
  constructor(readonly rng: Rng) {
    this.id = rng.uuid();
  }
  now(lo = 5, hi = 2000): number {
    this.clock += this.rng.int(lo, hi);
    return this.clock;
  }
  assistantShell(): Json {
    return {
      role: "assistant",
      content: [],
      api: API,
      provider: PROVIDER,
      model: MODEL,
      usage: ZERO,
      stopReason: "stop",
      timestamp: this.now(),
    };
  }
  responseId(): string {
    this.responses += 1;
    return `gen-${this.responses}-${this.rng.hex(12)}`;
  }
  callId(): string {
    this.calls += 1;
    return `call_${this.rng.hex(24)}`;
  }
}

interface Call {
  id: string;
  name: string;
  args: Json;
  result: string;
  isError: boolean;
  details?: Json;
  updates: string[];
}

function makeCall(rng: Rng, s: PiSession, pool: string[], shape: Shape): Call {
  const id = s.callId();
  const name = rng.pick(["read", "read", "read", "bash", "bash", "edit", "write"]);
  const path = `${rng.pick(DIRS)}/${rng.pick(WORDS)}-${rng.pick(WORDS)}${rng.pick(EXTS)}`;
  const size = resultSize(rng, shape);
  const cap = resultCap(shape);
  const isError = rng.chance(0.06);
  let args: Json;
  let result: string;
  let details: Json | undefined;
  const updates: string[] = [];
  switch (name) {
    case "read":
      args = rng.chance(0.3) ? { path, offset: rng.int(1, 400), limit: rng.int(50, 2000) } : { path };
      result = takeLines(rng, pool, size, (l) => l, cap);
      break;
    case "bash": {
      args = {
        command: rng.pick([
          `bun test ${path}`,
          `git log --oneline -n ${rng.int(5, 200)}`,
          `rg -n "${rng.pick(WORDS)}" src`,
          "bunx tsc --noEmit",
        ]),
      };
      result = takeLines(
        rng,
        pool,
        size,
        (l, n) => (n % 7 === 0 ? `(pass) ${rng.pick(WORDS)} > ${rng.pick(WORDS)} [${(rng.next() * 20).toFixed(2)}ms]` : l.trim()),
        cap,
      );
      const cut = Math.floor(result.length / 2);
      updates.push("", result.slice(0, cut));
      break;
    }
    case "edit": {
      const oldText = takeLines(rng, pool, rng.int(40, 1200), (l) => l);
      const newText = takeLines(rng, pool, rng.int(40, 1200), (l) => l);
      args = { path, oldText, newText };
      result = `Successfully replaced text in ${path}.`;
      details = {
        diff: `--- ${path}\n+++ ${path}\n${oldText
          .split("\n")
          .map((l) => `-${l}`)
          .join("\n")}\n${newText
          .split("\n")
          .map((l) => `+${l}`)
          .join("\n")}`,
        firstChangedLine: rng.int(1, 900),
      };
      break;
    }
    default: {
      const content = takeLines(rng, pool, rng.int(200, 6000), (l) => l);
      args = { path, content };
      result = `Successfully wrote ${content.length} bytes to ${path}`;
      break;
    }
  }
  if (isError) {
    result = rng.pick(ERRORS);
    details = undefined;
  }
  return { id, name, args, result, isError, details, updates };
}

/** One assistant message, streamed: message_start, updates, message_end. Returns the final message. */
async function streamAssistant(
  sink: LineSink,
  rng: Rng,
  s: PiSession,
  blocks: { thinking?: string; text?: string; calls: Call[] },
  stop: { reason: "stop" | "toolUse" | "error"; errorMessage?: string },
  tokens: { input: number; output: number; cacheRead: number },
): Promise<Json> {
  const msg = s.assistantShell();
  const content: Json[] = [];
  msg.content = content;
  const responseId = s.responseId();
  await sink.record({ type: "message_start", message: msg });
  const update = (event: Json) => {
    const partial = { ...msg, content: content.map((b) => ({ ...b })) };
    return sink.record({ type: "message_update", assistantMessageEvent: { ...event, partial }, message: partial });
  };
  if (blocks.thinking !== undefined) {
    const index = content.length;
    content.push({ type: "thinking", thinking: "" });
    await update({ type: "thinking_start", contentIndex: index });
    for (const d of deltas(rng, blocks.thinking, 6)) {
      (content[index] as Json).thinking += d;
      await update({ type: "thinking_delta", contentIndex: index, delta: d });
    }
    await update({ type: "thinking_end", contentIndex: index, content: blocks.thinking });
  }
  if (blocks.text !== undefined) {
    const index = content.length;
    content.push({ type: "text", text: "" });
    await update({ type: "text_start", contentIndex: index });
    for (const d of deltas(rng, blocks.text, 8)) {
      (content[index] as Json).text += d;
      await update({ type: "text_delta", contentIndex: index, delta: d });
    }
    await update({ type: "text_end", contentIndex: index, content: blocks.text });
  }
  for (const call of blocks.calls) {
    const index = content.length;
    const argsText = JSON.stringify(call.args);
    const block: Json = { type: "toolCall", id: call.id, name: call.name, arguments: {}, partialArgs: "", streamIndex: index };
    content.push(block);
    await update({ type: "toolcall_start", contentIndex: index });
    for (const d of deltas(rng, argsText, 6)) {
      block.partialArgs = (block.partialArgs as string) + d;
      await update({ type: "toolcall_delta", contentIndex: index, delta: d });
    }
    delete block.partialArgs;
    delete block.streamIndex;
    block.arguments = call.args;
    await update({
      type: "toolcall_end",
      contentIndex: index,
      toolCall: { type: "toolCall", id: call.id, name: call.name, arguments: call.args },
    });
  }
  msg.usage = usage(tokens.input, tokens.output, tokens.cacheRead);
  msg.stopReason = stop.reason;
  if (stop.errorMessage !== undefined) msg.errorMessage = stop.errorMessage;
  msg.responseId = responseId;
  await sink.record({ type: "message_end", message: msg });
  return msg;
}

export async function generatePiStream(opts: {
  mb: number;
  out: string;
  seed?: number;
  quiet?: boolean;
  shape?: Shape;
}): Promise<GenStats> {
  const shape = opts.shape ?? "short";
  const t0 = performance.now();
  const rng = new Rng((opts.seed ?? 1) ^ 0x5049);
  const pool = buildCodePool(rng, 4096);
  const target = Math.floor(opts.mb * MIB);
  const sink = new LineSink(opts.out);
  const s = new PiSession(rng);
  const history: Json[] = [];
  let turns = 0;
  let toolResults = 0;
  let errorResults = 0;
  let context = 3000;

  await sink.record({ type: "session", version: 3, id: s.id, timestamp: new Date(s.clock).toISOString(), cwd: CWD });
  await sink.record({ type: "agent_start" });
  await sink.record({ type: "turn_start" });
  const user = { role: "user", content: [{ type: "text", text: `${rng.pick(SENTENCES)} Then run the tests.` }], timestamp: s.now() };
  await sink.record({ type: "message_start", message: user });
  await sink.record({ type: "message_end", message: user });
  history.push(user);

  const reserve = 8192; // the final answer (agent_end comes on top: up to 1 MiB more)
  while (sink.bytes + reserve < target) {
    turns += 1;
    if (turns > 1) await sink.record({ type: "turn_start" });
    if (rng.chance(0.01)) {
      // A failed attempt, retried by pi.
      const errorMessage = rng.pick(["500 Internal server error", "429 Rate limit exceeded", "Overloaded"]);
      await streamAssistant(sink, rng, s, { calls: [] }, { reason: "error", errorMessage }, { input: 0, output: 0, cacheRead: 0 });
      await sink.record({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage });
      await sink.record({ type: "auto_retry_end", success: true, attempt: 1 });
    }
    const calls: Call[] = [];
    const n = rng.chance(0.75) ? 1 : rng.int(2, 3);
    for (let i = 0; i < n; i++) calls.push(makeCall(rng, s, pool, shape));
    context += rng.int(200, 6000);
    const message = await streamAssistant(
      sink,
      rng,
      s,
      { thinking: rng.chance(0.2) ? assistantText(rng) : undefined, text: rng.chance(0.7) ? assistantText(rng) : undefined, calls },
      { reason: "toolUse" },
      { input: rng.int(50, 4000), output: rng.int(20, 800), cacheRead: context },
    );
    history.push(message);
    const results: Json[] = [];
    for (const call of calls) {
      await sink.record({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.args });
      for (const u of call.updates) {
        await sink.record({
          type: "tool_execution_update",
          toolCallId: call.id,
          toolName: call.name,
          args: call.args,
          partialResult: { content: u ? [{ type: "text", text: u }] : [], ...(u ? { details: {} } : {}) },
        });
      }
      const result: Json = { content: [{ type: "text", text: call.result }] };
      if (call.details !== undefined) result.details = call.details;
      await sink.record({ type: "tool_execution_end", toolCallId: call.id, toolName: call.name, result, isError: call.isError });
      const toolMessage: Json = {
        role: "toolResult",
        toolCallId: call.id,
        toolName: call.name,
        content: result.content,
        isError: call.isError,
        timestamp: s.now(20, 4000),
      };
      if (call.details !== undefined) toolMessage.details = call.details;
      await sink.record({ type: "message_start", message: toolMessage });
      await sink.record({ type: "message_end", message: toolMessage });
      results.push(toolMessage);
      history.push(toolMessage);
      toolResults += 1;
      if (call.isError) errorResults += 1;
    }
    await sink.record({ type: "turn_end", message, toolResults: results });
  }
  turns += 1;
  await sink.record({ type: "turn_start" });
  const finalText = `Done. ${assistantText(rng)}`;
  const last = await streamAssistant(
    sink,
    rng,
    s,
    { text: finalText, calls: [] },
    { reason: "stop" },
    { input: rng.int(50, 400), output: rng.int(20, 200), cacheRead: context },
  );
  history.push(last);
  await sink.record({ type: "turn_end", message: last, toolResults: [] });
  // agent_end: the newest messages, up to ~1 MiB, ~6 MiB when heavy (see the header comment).
  const kept: Json[] = [];
  const keep = shape === "heavy" ? 6 * MIB : MIB;
  let size = 0;
  for (let i = history.length - 1; i >= 0; i--) {
    const n = JSON.stringify(history[i]).length;
    if (size + n > keep && kept.length > 0) break;
    kept.unshift(history[i] as Json);
    size += n;
  }
  await sink.record({ type: "agent_end", messages: kept });
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
  if (!opts.quiet) {
    console.error(
      `gen-pi-stream: wrote ${opts.out}: ${(stats.bytes / MIB).toFixed(1)} MiB (${stats.bytes} bytes), ${stats.lines} lines, ` +
        `${stats.turns} turns, ${stats.toolResults} tool results (${stats.errorResults} errors), max line ${(stats.maxLineBytes / 1024).toFixed(1)} KiB, ` +
        `${stats.seconds.toFixed(1)} s`,
    );
  }
  return stats;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      mb: { type: "string", default: "200" },
      out: { type: "string" },
      seed: { type: "string", default: "1" },
      shape: { type: "string", default: "short" },
      help: { type: "boolean", short: "h" },
    },
  });
  const usageText = "usage: bun run scripts/gen-pi-stream.ts --mb N --out FILE [--seed S] [--shape short|heavy]";
  if (values.help) {
    console.log(usageText);
    process.exit(0);
  }
  const mb = Number(values.mb);
  const seed = Number(values.seed);
  const shape = values.shape as Shape;
  if (!values.out || !(mb > 0) || !Number.isFinite(seed) || !SHAPES.includes(shape)) {
    console.error(usageText);
    process.exit(2);
  }
  await generatePiStream({ mb, out: values.out, seed, shape });
}
