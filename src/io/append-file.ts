// An append-only record file of a run folder (stream.jsonl, progress.ndjson),
// kept open and written in batches. A write per record cost more than the
// whole reduction (open, write and close per progress event; a write per
// stream line): records now collect in one reused buffer that goes out once
// per turn of the event loop, when it fills, and before the process exits.
// A kill -9 loses at most the records of the turn it lands in.
//
// A write that fails (a full disk, a closed fd) stops the recording, never the run.
// With a limit, the file ends with one last record once it holds that many
// bytes (it may pass them by the one record that reached them).
import { closeSync, fstatSync, openSync, writeSync } from "node:fs";

const BUFFER_BYTES = 64 * 1024;
const LF = 0x0a;
const encoder = new TextEncoder();
const open = new Map<string, AppendFile>();
let exitHook = false;

function flushAll(): void {
  for (const file of open.values()) file.flush();
}

/** How big a record file may grow, and the record that ends it there. */
export interface RecordLimit {
  maxBytes: number;
  last: string;
}

/** The record file at `path`, opened (created, mode 0600) on first use; closing it makes the next use open it again. */
export function recordFile(path: string, limit?: RecordLimit): AppendFile {
  return open.get(path) ?? new AppendFile(path, limit);
}

/** Written out and closed, if it is open (a run's end). */
export function closeRecordFile(path: string): void {
  open.get(path)?.close();
}

class AppendFile {
  private fd: number | null;
  private readonly buffer = new Uint8Array(BUFFER_BYTES);
  private used = 0;
  /** Bytes in the file (appended to, it may hold some already), not counting the buffer. */
  private size = 0;
  private scheduled = false;

  constructor(
    private readonly path: string,
    private readonly limit?: RecordLimit,
  ) {
    // Kept even when it cannot be opened: a failed recording stays stopped until it is closed.
    open.set(path, this);
    try {
      this.fd = openSync(path, "a", 0o600);
      if (limit !== undefined) this.size = fstatSync(this.fd).size;
    } catch {
      this.fd = null; // no room for the recording: the run goes on without it
    }
    if (!exitHook) {
      exitHook = true;
      process.on("exit", flushAll);
    }
  }

  /** One record: its text or bytes, then an LF. */
  line(record: string | Uint8Array): void {
    if (this.fd === null) return;
    if (this.limit !== undefined && this.size + this.used >= this.limit.maxBytes) {
      this.end(this.limit.last);
      return;
    }
    this.append(record);
  }

  private append(record: string | Uint8Array): void {
    if (typeof record === "string") this.text(record);
    else this.bytes(record);
    if (this.used === BUFFER_BYTES) this.flush();
    this.buffer[this.used++] = LF;
    this.later();
  }

  flush(): void {
    if (this.fd === null || this.used === 0) return;
    const pending = this.used;
    this.used = 0;
    this.out(this.buffer.subarray(0, pending));
  }

  close(): void {
    this.flush();
    this.stop();
    if (open.get(this.path) === this) open.delete(this.path);
  }

  private text(record: string): void {
    // Most records fit the room left; encodeInto says when one did not.
    const room = this.buffer.subarray(this.used);
    const { read, written } = encoder.encodeInto(record, room);
    if (read === record.length) {
      this.used += written;
      return;
    }
    this.used += written;
    this.flush();
    const rest = record.slice(read);
    // A record at most a third of the buffer long always fits an empty one (3 bytes a UTF-16 unit at most).
    if (rest.length * 3 <= BUFFER_BYTES) this.used += encoder.encodeInto(rest, this.buffer).written;
    else this.out(encoder.encode(rest));
  }

  private bytes(record: Uint8Array): void {
    if (this.used + record.length <= BUFFER_BYTES) {
      this.buffer.set(record, this.used);
      this.used += record.length;
      return;
    }
    this.flush();
    // A big record is not copied: written from where it is.
    if (record.length > BUFFER_BYTES / 2) this.out(record);
    else {
      this.buffer.set(record);
      this.used = record.length;
    }
  }

  private out(bytes: Uint8Array): void {
    if (this.fd === null) return;
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(this.fd, bytes, off);
      this.size += bytes.length;
    } catch {
      this.used = 0;
      this.stop();
    }
  }

  /** The last record, then nothing more (the file stays registered, so it stays ended until closed). */
  private end(last: string): void {
    this.append(last);
    this.flush();
    this.stop();
  }

  private stop(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // already gone
    }
    this.fd = null;
  }

  private later(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.flush();
    });
  }
}
