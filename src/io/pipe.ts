// The agent's stdout as a byte source. Where libc can be reached (Linux), an
// OS pipe of our own read into one reused buffer: Bun's subprocess stream
// hands every chunk over in a fresh buffer that only a full collection frees,
// which kept `agentport run` ~20 MiB above replay (README, Benchmarks).
// Elsewhere, Bun's stream.
//
// The read end is non-blocking and read synchronously, waiting a little
// between tries while it is empty: a blocking read would hold one of the few
// threads of Bun's pool for as long as the agent is quiet, and a handful of
// agents at once (bon, selftest) held them all.
import { closeSync, fstatSync, readSync } from "node:fs";
import { openLibc } from "./libc.ts";

/** Chunks of a child's output; a chunk is valid until the next read. */
export interface ByteSource {
  /** Each chunk a fresh buffer, which only a full collection frees. */
  readonly fresh: boolean;
  /** The next chunk, or null at the end (or once cancelled). */
  read(): Promise<Uint8Array | null>;
  /**
   * Resolves once what the agent wrote so far has been read and handed on
   * (the pipe found empty, or at its end), or after `maxMs`: a stop judges
   * the run on everything written before it.
   */
  caughtUp(maxMs: number): Promise<void>;
  /** Stop reading: a process that escaped the group may hold the pipe open for ever. */
  cancel(): void;
  /** Reading is over (after the end or a cancel). */
  release(): void;
}

const O_CLOEXEC = 0o2000000;
const O_NONBLOCK = 0o4000;
const F_GETFL = 3;
const F_SETFL = 4;
const F_SETPIPE_SZ = 1031;
// While the pipe is empty: the next try after 1 ms, doubling up to this (and at once when the agent exits).
const MAX_WAIT_MS = 32;
// A pipe this big lets the agent write ahead while a big record is scanned; the read buffer matches it.
const PIPE_BYTES = 1024 * 1024;

interface Libc {
  pipe2(fds: Int32Array): number;
  setPipeSize(fd: number, bytes: number): number;
  setNonBlocking(fd: number): number;
}

let libc: Libc | null | undefined;

function loadLibc(): Libc | null {
  if (libc !== undefined) return libc;
  // musl, no FFI: the stream does the job, with more garbage.
  const lib = openLibc({
    pipe2: { args: ["ptr", "i32"], returns: "i32" },
    fcntl: { args: ["i32", "i32", "i32"], returns: "i32" },
  });
  if (lib === null) return (libc = null);
  const { ptr } = require("bun:ffi") as typeof import("bun:ffi");
  libc = {
    pipe2: (fds) => lib.symbols.pipe2(ptr(fds), O_CLOEXEC),
    setPipeSize: (fd, bytes) => lib.symbols.fcntl(fd, F_SETPIPE_SZ, bytes),
    setNonBlocking: (fd) => lib.symbols.fcntl(fd, F_SETFL, lib.symbols.fcntl(fd, F_GETFL, 0) | O_NONBLOCK),
  };
  return libc;
}

/**
 * A close-on-exec pipe (the spawn dup2s the write end onto the child's
 * stdout), its read end non-blocking (the write end stays blocking: it is the
 * agent's stdout); null where there is none to be had.
 */
export function osPipe(): { readFd: number; writeFd: number } | null {
  const c = loadLibc();
  if (c === null) return null;
  const fds = new Int32Array(2);
  if (c.pipe2(fds) !== 0) return null;
  if (c.setNonBlocking(fds[0]!) !== 0) {
    closeSync(fds[0]!);
    closeSync(fds[1]!);
    return null;
  }
  c.setPipeSize(fds[0]!, PIPE_BYTES); // best effort: a smaller pipe only means more reads
  return { readFd: fds[0]!, writeFd: fds[1]! };
}

/** The non-blocking read end of a pipe, read into one buffer reused from read to read; the fd is ours to close. */
export class FdSource implements ByteSource {
  readonly fresh = false;
  private readonly buffer = new Uint8Array(PIPE_BYTES);
  private cancelled = false;
  private closed = false;
  private wake: (() => void) | null = null;
  /** Who waits for the pipe to be found empty (caughtUp); null once it has ended. */
  private waiters: (() => void)[] | null = [];

  /** `exited`: the child is gone, so an empty pipe is worth another look at once. */
  constructor(
    private readonly fd: number,
    exited: Promise<unknown>,
  ) {
    void exited.then(() => this.wake?.());
  }

  async read(): Promise<Uint8Array | null> {
    let waitMs = 1;
    for (;;) {
      if (this.cancelled || this.closed) return null;
      let n: number;
      try {
        n = readSync(this.fd, this.buffer, 0, this.buffer.length, null);
      } catch (error) {
        if ((error as { code?: string }).code !== "EAGAIN") throw error;
        // Every chunk read so far has been handed on (the caller asks again only after it is done with the last).
        this.settle(false);
        await this.idle(waitMs);
        waitMs = Math.min(waitMs * 2, MAX_WAIT_MS);
        continue;
      }
      if (n === 0) {
        this.settle(true);
        return null;
      }
      // A turn of the event loop per chunk, as a stream gives: timers (stall, timeout) and stderr are not starved.
      await new Promise((resolve) => setImmediate(resolve));
      return this.buffer.subarray(0, n);
    }
  }

  caughtUp(maxMs: number): Promise<void> {
    if (this.waiters === null || this.cancelled || this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      this.waiters!.push(() => {
        clearTimeout(timer);
        resolve();
      });
      this.wake?.(); // look now, not after the current wait
    });
  }

  cancel(): void {
    this.cancelled = true;
    this.settle(true);
    this.wake?.();
  }

  release(): void {
    this.settle(true);
    if (this.closed) return;
    this.closed = true;
    try {
      closeSync(this.fd);
    } catch {
      // already gone
    }
  }

  private settle(ended: boolean): void {
    const waiting = this.waiters;
    if (waiting === null) return;
    this.waiters = ended ? null : [];
    for (const resolve of waiting) resolve();
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
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
    // A stream says nothing of what is still in the pipe: one turn of the event loop for what has arrived.
    caughtUp: () => new Promise((resolve) => setImmediate(resolve)),
    cancel: () => void reader.cancel().catch(() => {}),
    release: () => reader.releaseLock(),
  };
}

/**
 * Our own stdin as a byte source: when it is a pipe or a socket (a client
 * speaking to `agentport acp`), read non-blocking into one reused buffer like
 * an agent's stdout, so a flood of input leaves no garbage behind; else (a
 * terminal, a file) Bun's stream, which leaves the terminal's flags alone.
 */
export function stdinSource(): ByteSource {
  const c = loadLibc();
  const stats = fstatSync(0);
  if (c !== null && (stats.isFIFO() || stats.isSocket()) && c.setNonBlocking(0) === 0) return new FdSource(0, new Promise(() => {}));
  return streamSource(Bun.stdin.stream());
}
