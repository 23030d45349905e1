// An agent's stderr, read from a pipe into `stderr.log`, bounded: the first
// half of the limit as it comes (what a killed runner leaves), the last half
// kept in memory and written at the end after a line that marks the cut. An
// agent that writes 100 MB to stderr leaves 8 MiB. A write that fails (a full
// disk) stops the writing, never the reading: the agent must not block.
// Nothing is stored unredacted: each line goes through the one redactor (by
// value and by shape) before it is kept; a line longer than LINE_BYTES is
// redacted in pieces of that size. A line is held back until the next one
// comes (or the end, or HOLD_MS of quiet), so that a secret split by a line
// break (or by a piece's end) is found across it and both its parts are
// redacted; the quiet bound keeps a live reader of the file (`follow`, a
// script waiting for a line) at most that far behind.
import { closeSync, openSync, writeSync } from "node:fs";
import { REDACTED, secrets } from "../core/redact.ts";
import { cleanTail, TAIL_BYTES } from "./tail.ts";

export const STDERR_LOG_BYTES = 8 * 1024 * 1024;
// Room for the line that marks the cut, within the limit.
const MARK_BYTES = 200;
const LF = 0x0a;
export const LINE_BYTES = 64 * 1024;
/** How long a whole line waits for the next before it is kept on its own. */
const HOLD_MS = 200;

export class StderrLog {
  private fd: number | null;
  private written = 0;
  private total = 0;
  /** The last bytes seen (about `tailBytes`): the file's tail and the error message's. */
  private ring: Uint8Array[] = [];
  private ringBytes = 0;
  private readonly headBytes: number;
  private readonly tailBytes: number;
  private reader: { cancel(): Promise<void> } | null = null;
  private finished = false;
  /** The line not yet ended by LF (at most LINE_BYTES). */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  /** The last whole line (or piece), not yet kept: the next may end a secret it starts. */
  private held: Uint8Array | null = null;
  private quiet: ReturnType<typeof setTimeout> | null = null;
  /** Why the file stopped growing early (ENOSPC), if it did. */
  failure: string | null = null;

  constructor(
    readonly path: string,
    limit: number = STDERR_LOG_BYTES,
  ) {
    this.headBytes = Math.floor(limit / 2);
    this.tailBytes = limit - this.headBytes - MARK_BYTES;
    this.fd = this.attempt(() => openSync(path, "w", 0o600));
  }

  /** Read `stream` to its end (or until cancel()). */
  async drain(stream: ReadableStream<Uint8Array>): Promise<void> {
    const reader = stream.getReader();
    this.reader = reader;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        this.push(value);
      }
    } catch {
      // A cancelled read: what came so far is kept.
    }
  }

  /** Stop reading: a process that escaped still holds the pipe. */
  cancel(): void {
    void this.reader?.cancel().catch(() => {});
  }

  /** Bytes as they come from the pipe: whole lines are redacted and kept; the rest waits for its LF. */
  push(chunk: Uint8Array): void {
    if (this.finished) return;
    let start = 0;
    for (let lf = chunk.indexOf(LF); lf !== -1; lf = chunk.indexOf(LF, start)) {
      this.hold(chunk.subarray(start, lf + 1));
      this.keepLine();
      start = lf + 1;
    }
    if (start < chunk.length) this.hold(chunk.subarray(start));
    this.keepHeldWhenQuiet();
  }

  /** The held line is kept after HOLD_MS without a new one (never holding the process open). */
  private keepHeldWhenQuiet(): void {
    if (this.quiet !== null) clearTimeout(this.quiet);
    this.quiet = null;
    if (this.held === null) return;
    this.quiet = setTimeout(() => {
      this.quiet = null;
      if (this.finished || this.held === null) return;
      this.keep(redactedLine(this.held));
      this.held = null;
    }, HOLD_MS);
    (this.quiet as { unref?: () => void }).unref?.();
  }

  private hold(piece: Uint8Array): void {
    for (let off = 0; off < piece.length; ) {
      const room = LINE_BYTES - this.pendingBytes;
      const part = piece.subarray(off, off + room);
      this.pending.push(part.slice()); // the stream may reuse its buffer
      this.pendingBytes += part.length;
      off += part.length;
      if (this.pendingBytes >= LINE_BYTES) this.keepLine();
    }
  }

  private keepLine(): void {
    if (this.pendingBytes === 0) return;
    const line = concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    const held = this.held;
    this.held = line;
    if (held === null) return;
    const [before, after] = acrossBreak(held, line);
    this.keep(before);
    this.held = after;
  }

  private keep(chunk: Uint8Array): void {
    this.total += chunk.length;
    if (this.written < this.headBytes) {
      const head = chunk.subarray(0, this.headBytes - this.written);
      this.write(head);
      this.written += head.length;
    }
    this.ring.push(chunk);
    this.ringBytes += chunk.length;
    while (this.ring.length > 1 && this.ringBytes - this.ring[0]!.length >= this.tailBytes) this.ringBytes -= this.ring.shift()!.length;
  }

  /** The tail after the head, with the cut marked when there was one; the file is closed. */
  finish(): void {
    if (this.finished) return;
    this.keepLine();
    if (this.quiet !== null) clearTimeout(this.quiet);
    if (this.held !== null) this.keep(redactedLine(this.held));
    this.held = null;
    this.finished = true;
    const after = this.total - this.written;
    if (after > 0) {
      const tail = concat(this.ring).subarray(Math.max(0, this.ringBytes - Math.min(after, this.tailBytes)));
      const cut = after - tail.length;
      if (cut > 0)
        this.write(
          new TextEncoder().encode(
            `\n[agentport: ${cut} bytes of stderr cut here; the first ${this.written} and the last ${tail.length} of ${this.total} are kept]\n`,
          ),
        );
      this.write(tail);
    }
    if (this.fd !== null) this.attempt(() => closeSync(this.fd!));
    this.fd = null;
  }

  /** The last bytes of stderr, cleaned for an error message. */
  tail(maxBytes = TAIL_BYTES): string {
    const last = concat(this.held === null ? this.ring : [...this.ring, redactedLine(this.held)]);
    return cleanTail(new TextDecoder().decode(last.subarray(Math.max(0, last.length - maxBytes))));
  }

  private write(bytes: Uint8Array): void {
    if (this.fd === null || this.failure !== null) return;
    this.attempt(() => {
      for (let off = 0; off < bytes.length; ) off += writeSync(this.fd!, bytes, off);
    });
  }

  private attempt<T>(body: () => T): T | null {
    try {
      return body();
    } catch (error) {
      this.failure ??= (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return null;
    }
  }
}

/**
 * Two lines in a row, the first redacted (as `before`), the second as it
 * came or, when a secret runs from the first into it, with that secret's
 * start replaced, to be redacted in its turn.
 */
function acrossBreak(first: Uint8Array, second: Uint8Array): [Uint8Array, Uint8Array] {
  if (secrets.size === 0) return [redactedLine(first), second];
  const decoder = new TextDecoder();
  const text = decoder.decode(first);
  const eol = /\r?\n$/.exec(text)?.[0] ?? "";
  const head = text.slice(0, text.length - eol.length);
  const next = decoder.decode(second);
  const split = secrets.acrossBreak(head, next);
  if (split === null) return [redactedLine(first), second];
  const encoder = new TextEncoder();
  return [
    encoder.encode(`${secrets.text(head.slice(0, split.start))}${REDACTED}${eol}`),
    encoder.encode(`${REDACTED}${next.slice(split.end)}`),
  ];
}

/** The line through the redactor; its bytes unchanged when there was nothing to hide (invalid UTF-8 stays as it came). */
function redactedLine(line: Uint8Array): Uint8Array {
  const text = new TextDecoder().decode(line);
  const redacted = secrets.text(text);
  return redacted === text ? line : new TextEncoder().encode(redacted);
}

function concat(chunks: Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let off = 0;
  for (const c of chunks) {
    out.set(c, off);
    off += c.length;
  }
  return out;
}
