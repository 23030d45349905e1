// The bounded LF framer: bytes in, lines out. Pure; runs on any runtime.
//
// LF (0x0A) is the only delimiter, so U+2028/U+2029 inside a JSON string
// never split a line, and a UTF-8 character split across chunks is decoded
// whole because a line's bytes are joined before they are decoded. A line
// longer than the bound is skipped as it streams past: at most `maxLineBytes`
// of it are ever held, in one buffer reused from line to line.
//
// A line of `bigLineBytes` or more goes to a sink's `bigLine`, when it has
// one, as checked UTF-8 bytes instead of a string: the reducers scan such a
// record for the few fields they read rather than parse all of it.
import { isWellFormedUtf8, type Utf8Check } from "./utf8.ts";

export const DEFAULT_MAX_LINE_BYTES = 8 * 1024 * 1024;
// Measured (README, Benchmarks): from a few KiB up, scanning a record leaves
// less garbage than JSON.parse and is faster; below, parsing is cheaper.
export const DEFAULT_BIG_LINE_BYTES = 4096;
// The held line's buffer is reserved whole up to this size: untouched pages
// cost no memory, and a buffer that never grows leaves no garbage behind.
const RESERVE_BYTES = 64 * 1024 * 1024;

/** Where the framer delivers. The reducers implement it. */
export interface LineSink {
  /** One complete line without its LF and without one trailing CR. */
  line(text: string): void;
  /**
   * A line of at least `bigLineBytes`, as well-formed UTF-8 bytes (no LF, no
   * trailing CR). The bytes are the framer's: valid only during the call.
   */
  bigLine?(bytes: Uint8Array): void;
  /** A line longer than `limit` bytes was skipped. */
  oversize(limit: number): void;
  /** The byte stream broke the framing (invalid UTF-8, an oversize unterminated tail). */
  framingError(what: string): void;
  /** The stream ended inside a line: its text, without an LF (the sink decides whether it is a whole record). */
  unterminated(text: string): void;
}

export interface FrameStats {
  lines: number;
  bytes: number;
  oversize: number;
}

const LF = 0x0a;
const CR = 0x0d;

export interface FramerOptions {
  /** Lines from this size go to the sink's `bigLine` (when it has one). */
  bigLineBytes?: number;
  /** How a big line's UTF-8 is checked; the runtime may have a faster one. */
  isUtf8?: Utf8Check;
}

export class LineFramer {
  readonly maxLineBytes: number;
  readonly stats: FrameStats = { lines: 0, bytes: 0, oversize: 0 };
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  private readonly sink: LineSink;
  private readonly bigLineBytes: number;
  private readonly isUtf8: Utf8Check;
  // The unfinished line, copied out of chunks the caller reuses, in one
  // buffer reused from line to line.
  private pending = new Uint8Array(0);
  private pendingBytes = 0;
  // Inside a line already known to be too long: drop bytes until its LF.
  private skipping = false;
  private ended = false;

  constructor(sink: LineSink, maxLineBytes = DEFAULT_MAX_LINE_BYTES, options: FramerOptions = {}) {
    if (!Number.isSafeInteger(maxLineBytes) || maxLineBytes < 1) {
      throw new RangeError(`maxLineBytes must be a positive integer, got ${maxLineBytes}`);
    }
    this.sink = sink;
    this.maxLineBytes = maxLineBytes;
    this.bigLineBytes = sink.bigLine === undefined ? Infinity : (options.bigLineBytes ?? DEFAULT_BIG_LINE_BYTES);
    this.isUtf8 = options.isUtf8 ?? isWellFormedUtf8;
  }

  push(chunk: Uint8Array): void {
    if (this.ended) throw new Error("LineFramer: push after end");
    this.stats.bytes += chunk.length;
    let start = 0;
    while (start < chunk.length) {
      const lf = chunk.indexOf(LF, start);
      if (lf === -1) {
        this.hold(chunk, start, chunk.length);
        return;
      }
      if (this.skipping) {
        this.skipping = false;
        this.skipped();
      } else if (this.pendingBytes === 0) {
        if (lf - start > this.maxLineBytes) this.skipped();
        else this.emit(chunk.subarray(start, lf));
      } else if (this.pendingBytes + (lf - start) > this.maxLineBytes) {
        this.drop();
        this.skipped();
      } else {
        this.append(chunk, start, lf);
        const bytes = this.pendingBytes;
        this.pendingBytes = 0;
        this.emit(this.pending.subarray(0, bytes));
      }
      start = lf + 1;
    }
  }

  /** The byte stream is over. Hands an unterminated last line over as such. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.skipping) {
      this.skipping = false;
      this.skipped();
      this.sink.framingError("the last line has no LF and is past the per-line bound");
    } else if (this.pendingBytes > 0) {
      const bytes = this.pending.subarray(0, this.pendingBytes);
      this.drop();
      const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
      let text: string;
      try {
        text = this.decoder.decode(bytes.subarray(0, end));
      } catch {
        this.sink.framingError(`the last line has no LF and is not valid UTF-8 (${bytes.length} bytes)`);
        return;
      }
      this.stats.lines += 1;
      this.sink.unterminated(text);
    }
  }

  private hold(chunk: Uint8Array, from: number, to: number): void {
    if (this.skipping || from === to) return;
    if (this.pendingBytes + (to - from) > this.maxLineBytes) {
      this.drop();
      this.skipping = true;
      return;
    }
    // A copy: the caller may reuse the chunk's buffer once push returns.
    this.append(chunk, from, to);
  }

  private append(chunk: Uint8Array, from: number, to: number): void {
    const need = this.pendingBytes + (to - from);
    if (need > this.pending.length) {
      const grown = new Uint8Array(Math.min(this.maxLineBytes, Math.max(need, this.pending.length * 2, RESERVE_BYTES)));
      grown.set(this.pending.subarray(0, this.pendingBytes));
      this.pending = grown;
    }
    this.pending.set(chunk.subarray(from, to), this.pendingBytes);
    this.pendingBytes = need;
  }

  private drop(): void {
    this.pendingBytes = 0;
  }

  private skipped(): void {
    this.stats.oversize += 1;
    this.sink.oversize(this.maxLineBytes);
  }

  private emit(bytes: Uint8Array): void {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
    if (end >= this.bigLineBytes) {
      const line = bytes.subarray(0, end);
      this.stats.lines += 1;
      if (this.isUtf8(line)) this.sink.bigLine!(line);
      else this.sink.framingError("a line is not valid UTF-8");
      return;
    }
    let text: string;
    try {
      text = this.decoder.decode(end === bytes.length ? bytes : bytes.subarray(0, end));
    } catch {
      this.stats.lines += 1;
      this.sink.framingError("a line is not valid UTF-8");
      return;
    }
    this.stats.lines += 1;
    this.sink.line(text);
  }
}
