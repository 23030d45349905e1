// What a phase leaves in its run folder, for a person to look at later:
// verdict.json (the verdict as --json prints it), stream.jsonl (the agent's
// stdout as framed, an oversize line as one marker record), progress.ndjson
// (the progress events as emitted), argv.json (the command, redacted, the
// agent's version and the model route) — stderr.log is the driver's.
import { writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import type { Reducer } from "../core/reduction.ts";
import { ACTIVITY_EVERY_MS, progressRecord, type ProgressEvent, type ProgressSink, type ProgressSubject } from "../core/progress.ts";
import { secrets } from "../core/redact.ts";
import { closeRecordFile, recordFile } from "./append-file.ts";
import { mayHoldShape } from "../core/secret-screen.ts";
import { safeJson } from "../core/text.ts";
import type { Verdict } from "../core/verdict.ts";

export const RUN_FILES = {
  verdict: "verdict.json",
  stream: "stream.jsonl",
  progress: "progress.ndjson",
  argv: "argv.json",
  stderr: "stderr.log",
  prompt: "prompt.txt",
} as const;

/** The record stream.jsonl holds in place of a line the framer skipped (replay reads it as a record of a type no reducer knows). */
export const OVERSIZE_MARKER = "agentport.oversize";

/** stream.jsonl stops at about this size, its last record `{"type":"agentport.stream_cut","max_bytes":N}`: a flood fills no disk. */
export const MAX_STREAM_BYTES = 1024 * 1024 * 1024;
export const STREAM_CUT_MARKER = "agentport.stream_cut";

/** progress.ndjson stops taking events at about this size, with one record `{"kind":"agentport.progress_cut","max_bytes":N}`; the verdict record still ends it. */
export const MAX_PROGRESS_BYTES = 64 * 1024 * 1024;
export const PROGRESS_CUT_MARKER = "agentport.progress_cut";

/** What argv.json says about the run besides the command. */
export interface RunAbout {
  agent: string;
  /** The agent's version, when agentport asked it (pi's probe); else null. */
  agentVersion?: string | null;
  /** Where the model's calls go: the model as the agent was told, and the gateway when there is one. */
  route?: string | null;
  /** The request this phase ran with (a resume: the birth request, with what its flags changed). */
  request?: Record<string, unknown> | null;
}

/** A file of the run folder, best effort: a full disk loses the file, never the run (the ledger has its own reserve). */
function writeBestEffort(path: string, text: string): void {
  try {
    writeFileSync(path, text, { mode: 0o600 });
  } catch {
    // nothing to do: the verdict is printed and in the ledger all the same
  }
}

/** argv.json: every word through the redactor; the prompt only as its sha256 and size, unless it is kept. */
export function writeArgv(runDir: string, argv: readonly string[], about: RunAbout, prompt: string | null, keepPrompt: boolean): void {
  const promptFacts =
    prompt === null
      ? null
      : { sha256: createHash("sha256").update(prompt).digest("hex"), bytes: Buffer.byteLength(prompt), kept: keepPrompt };
  const record = {
    argv: argv.map((word) => secrets.text(word)),
    agent: about.agent,
    agent_version: about.agentVersion ?? null,
    route: about.route ?? null,
    request: about.request ? redactedRequest(about.request) : null,
    prompt: promptFacts,
  };
  writeBestEffort(join(runDir, RUN_FILES.argv), `${JSON.stringify(record, null, 2)}\n`);
  if (prompt !== null && keepPrompt) writeBestEffort(join(runDir, RUN_FILES.prompt), secrets.values(prompt));
}

/** A request with every text in it redacted (a system prompt or a pass-through may hold a secret). */
function redactedRequest(request: Record<string, unknown>): Record<string, unknown> {
  const text = (v: unknown): unknown => (typeof v === "string" ? secrets.text(v) : Array.isArray(v) ? v.map(text) : v);
  return Object.fromEntries(Object.entries(request).map(([k, v]) => [k, text(v)]));
}

/** verdict.json: the same text `--json` prints. */
export function writeVerdict(runDir: string, verdict: Verdict): void {
  writeBestEffort(join(runDir, RUN_FILES.verdict), `${safeJson(secrets.verdict(verdict))}\n`);
}

/** The record stream.jsonl holds in place of a line that redaction would have left unparsable. */
export const REDACTED_MARKER = "agentport_redacted_line";

/**
 * A stream line as stream.jsonl may keep it: secrets by value and by shape
 * replaced. A replacement never adds a quote or a backslash, but a shape could
 * swallow one; a line that was JSON and is no longer becomes a marker record.
 */
export function storedLine(text: string): string {
  const redacted = secrets.text(text);
  if (redacted === text || parses(redacted) || !parses(text)) return redacted;
  return JSON.stringify({ type: REDACTED_MARKER, bytes: text.length });
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** What stands in the stream for a prompt that is not kept (an agent may echo it: pi does). */
export const WITHHELD_PROMPT = "[prompt withheld]";
/** A shorter prompt is not looked for in the stream: it would match ordinary words. */
const MIN_WITHHELD_CHARS = 6;

/** The prompt as it would appear inside a JSON string, when it is long enough to be looked for. */
function withheldText(withheld: string | null): string | null {
  return withheld === null || withheld.length < MIN_WITHHELD_CHARS ? null : JSON.stringify(withheld).slice(1, -1);
}

/** A line as stream.jsonl keeps it: storedLine, after the prompt is replaced where it appears inside a JSON string. */
function keptLine(escaped: string | null): (text: string) => string {
  if (escaped === null) return storedLine;
  return (text) => storedLine(text.replaceAll(escaped, WITHHELD_PROMPT));
}

/**
 * A big line's bytes as stream.jsonl keeps them: the bytes themselves when
 * they hold no known secret, no withheld prompt and nothing of a secret's
 * shape (byte checks, no decoding); else keptLine of their text.
 */
export function keptBytes(escaped: string | null): (bytes: Uint8Array) => Uint8Array | string {
  const kept = keptLine(escaped);
  const prompt = escaped === null ? null : Buffer.from(escaped);
  const decoder = new TextDecoder();
  return (bytes) => {
    const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
    const suspect = (prompt !== null && view.includes(prompt)) || secrets.holdsValue(bytes) || mayHoldShape(bytes);
    return suspect ? kept(decoder.decode(bytes)) : bytes;
  };
}

/** The reducer, with every framed line also written to stream.jsonl; `withheld` (the prompt, unless it is kept) is replaced. */
export function recordingStream(
  runDir: string,
  reducer: Reducer,
  withheld: string | null,
  maxBytes = MAX_STREAM_BYTES,
): Reducer & { close(): void } {
  const path = join(runDir, RUN_FILES.stream);
  const file = recordFile(path, { maxBytes: maxBytes, last: JSON.stringify({ type: STREAM_CUT_MARKER, max_bytes: maxBytes }) });
  const escaped = withheldText(withheld);
  const kept = keptLine(escaped);
  const keptBig = keptBytes(escaped);
  const recording: Reducer & { close(): void } = {
    line: (text) => {
      file.line(kept(text));
      reducer.line(text);
    },
    oversize: (limit) => {
      file.line(JSON.stringify({ type: OVERSIZE_MARKER, over_bytes: limit }));
      reducer.oversize(limit);
    },
    framingError: (what) => reducer.framingError(what),
    unterminated: (text) => {
      file.line(kept(text));
      reducer.unterminated(text);
    },
    streamEnded: () => {
      closeRecordFile(path);
      reducer.streamEnded();
    },
    reduction: () => reducer.reduction(),
    liveTokens: () => reducer.liveTokens(),
    finished: () => reducer.finished(),
    close: () => closeRecordFile(path),
  };
  // The supervisor's --max-cost and --max-turns read through the recording too.
  if (reducer.liveCost !== undefined) recording.liveCost = reducer.liveCost.bind(reducer);
  if (reducer.liveTurns !== undefined) recording.liveTurns = reducer.liveTurns.bind(reducer);
  if (reducer.liveOpenTools !== undefined) recording.liveOpenTools = reducer.liveOpenTools.bind(reducer);
  if (reducer.costSilent !== undefined) recording.costSilent = reducer.costSilent.bind(reducer);
  if (reducer.liveRetryError !== undefined) recording.liveRetryError = reducer.liveRetryError.bind(reducer);
  if (reducer.bigLine !== undefined) {
    const big = reducer.bigLine.bind(reducer);
    recording.bigLine = (bytes) => {
      file.line(keptBig(bytes));
      big(bytes);
    };
  }
  return recording;
}

/** The sink, with every event also appended to progress.ndjson as a record (when, whose, what); the file exists from the start, for `follow`. */
export function recordingProgress(
  runDir: string,
  subject: ProgressSubject,
  sink: ProgressSink | undefined,
  maxBytes = MAX_PROGRESS_BYTES,
): ProgressSink {
  const path = join(runDir, RUN_FILES.progress);
  const limit = { maxBytes, last: JSON.stringify({ kind: PROGRESS_CUT_MARKER, max_bytes: maxBytes }) };
  recordFile(path, limit); // created now, for `follow`
  let lastActivity = -Infinity;
  let last: ProgressEvent = { kind: "activity" };
  return (event) => {
    if (event.kind === "activity" && sameTotals(event, last)) {
      // Idle chatter: at most one a second, here and on stderr alike (one that brings new totals is no chatter).
      const now = performance.now();
      if (now - lastActivity < ACTIVITY_EVERY_MS) return;
      lastActivity = now;
    }
    last = event;
    recordFile(path, limit).line(secrets.text(JSON.stringify(progressRecord(event, subject))));
    sink?.(event, subject);
  };
}

function sameTotals(a: ProgressEvent, b: ProgressEvent): boolean {
  if (a.cost_micro_usd !== b.cost_micro_usd) return false;
  const [x, y] = [a.tokens, b.tokens];
  if (x == null || y == null) return x === y;
  return x.input === y.input && x.output === y.output && x.cache_read === y.cache_read && x.cache_write === y.cache_write;
}

/** The run's last progress record, the verdict in brief: `follow` ends with it. */
export function appendVerdictRecord(runDir: string, record: Record<string, unknown>): void {
  // After every event before it; the run's last record, so the file is closed (the verdict is printed and in verdict.json whether or not it is written).
  // Past the cut too: closed and opened again, the file takes this one record more.
  const path = join(runDir, RUN_FILES.progress);
  closeRecordFile(path);
  recordFile(path).line(secrets.text(JSON.stringify(record)));
  closeRecordFile(path);
}
