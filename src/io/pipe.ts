// The agent's stdout as a byte source. Where libc can be reached (Linux), an
// OS pipe of our own read into one reused buffer: Bun's subprocess stream
// hands every chunk over in a fresh buffer that only a full collection frees,
// which kept `agentport run` ~20 MiB above replay (README, Benchmarks).
// Elsewhere, Bun's stream.
import { closeSync, read } from "node:fs";

/** Chunks of a child's output; a chunk is valid until the next read. */
export interface ByteSource {
  /** Each chunk a fresh buffer, which only a full collection frees. */
  readonly fresh: boolean;
  /** The next chunk, or null at the end (or once cancelled). */
  read(): Promise<Uint8Array | null>;
  /** Stop reading: a process that escaped the group may hold the pipe open for ever. */
  cancel(): void;
  /** Reading is over (after the end or a cancel). */
  release(): void;
}

const O_CLOEXEC = 0o2000000;
const F_SETPIPE_SZ = 1031;
// A pipe this big lets the agent write ahead while a big record is scanned; the read buffer matches it.
const PIPE_BYTES = 1024 * 1024;

interface Libc {
  pipe2(fds: Int32Array): number;
  setPipeSize(fd: number, bytes: number): number;
}

let libc: Libc | null | undefined;

function loadLibc(): Libc | null {
  if (libc !== undefined) return libc;
  libc = null;
  if (process.platform !== "linux") return libc;
  try {
    // Loaded here, not at the top: only a run that spawns an agent pays for it.
    const { dlopen, FFIType, ptr } = require("bun:ffi") as typeof import("bun:ffi");
    const lib = dlopen("libc.so.6", {
      pipe2: { args: [FFIType.ptr, FFIType.i32], returns: FFIType.i32 },
      fcntl: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    });
    libc = {
      pipe2: (fds) => lib.symbols.pipe2(ptr(fds), O_CLOEXEC),
      setPipeSize: (fd, bytes) => lib.symbols.fcntl(fd, F_SETPIPE_SZ, bytes),
    };
  } catch {
    libc = null; // musl, no FFI: the stream does the job, with more garbage
  }
  return libc;
}

/** A close-on-exec pipe (the spawn dup2s the write end onto the child's stdout), or null where there is none to be had. */
export function osPipe(): { readFd: number; writeFd: number } | null {
  const c = loadLibc();
  if (c === null) return null;
  const fds = new Int32Array(2);
  if (c.pipe2(fds) !== 0) return null;
  c.setPipeSize(fds[0]!, PIPE_BYTES); // best effort: a smaller pipe only means more reads
  return { readFd: fds[0]!, writeFd: fds[1]! };
}

/** The read end of a pipe, read into one buffer reused from read to read; the fd is ours to close. */
export class FdSource implements ByteSource {
  readonly fresh = false;
  private readonly buffer = new Uint8Array(PIPE_BYTES);
  private pending: Promise<number> | null = null;
  private cancelled = false;
  private closed = false;
  private wake: (() => void) | null = null;

  constructor(private readonly fd: number) {}

  async read(): Promise<Uint8Array | null> {
    if (this.cancelled) return null;
    const pending = new Promise<number>((resolve, reject) => read(this.fd, this.buffer, 0, this.buffer.length, null, (error, n) => (error ? reject(error) : resolve(n))));
    this.pending = pending;
    const cancelled = new Promise<null>((resolve) => (this.wake = () => resolve(null)));
    const n = await Promise.race([pending, cancelled]);
    this.wake = null;
    if (n === null || this.cancelled) return null;
    this.pending = null;
    return n === 0 ? null : this.buffer.subarray(0, n);
  }

  cancel(): void {
    this.cancelled = true;
    this.wake?.();
  }

  release(): void {
    // A read still blocked in the thread pool keeps the fd until it returns.
    if (this.pending !== null) void this.pending.catch(() => 0).then(() => this.close());
    else this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      closeSync(this.fd);
    } catch {
      // already gone
    }
  }
}

/** Bun's stream of a child's output. */
export function streamSource(stream: ReadableStream<Uint8Array>): ByteSource {
  const reader = stream.getReader();
  return {
    fresh: true,
    read: async () => {
      const { done, value } = await reader.read();
      return done ? null : value;
    },
    cancel: () => void reader.cancel().catch(() => {}),
    release: () => reader.releaseLock(),
  };
}
