// Read a file (or stdin) in chunks through one reused buffer: memory stays
// flat whatever the file holds, because nothing is allocated per chunk. The
// framer copies what it keeps, so reusing the buffer is safe.
//
// Bun's collector is lazy with a small heap: the garbage of the records
// reduced so far piles up (a 30 MB stream of small records peaked past 90 MB).
// A collection every few MiB of input keeps the peak flat (README, Benchmarks).
import { closeSync, readSync } from "node:fs";
import { openNamedFile } from "./named-file.ts";

const CHUNK_BYTES = 256 * 1024;
const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

/**
 * Counts the bytes read and collects garbage every COLLECT_EVERY_BYTES.
 * `full`: also old objects, as the chunks a pipe's stream hands out (a fresh
 * buffer each) only go in a full collection. `fullEveryBytes`: a full one that
 * often all the same: `agentport run`'s peak on a stream of short lines was
 * 71–78 MiB by turns without it, 68–70 MiB with one every 8 MiB, for no
 * measurable CPU (replay's synchronous loop would pay 20–40% more for it).
 */
export class Collector {
  private uncollected = 0;
  private sinceFull = 0;
  constructor(
    private readonly full: boolean,
    private readonly fullEveryBytes = Infinity,
  ) {}

  read(bytes: number): void {
    this.uncollected += bytes;
    this.sinceFull += bytes;
    if (this.uncollected < COLLECT_EVERY_BYTES) return;
    this.uncollected = 0;
    const full = this.full || this.sinceFull >= this.fullEveryBytes;
    if (full) this.sinceFull = 0;
    Bun.gc(full);
  }
}

/** `path`, or standard input when it is undefined or "-". */
export function readChunks(path: string | undefined, each: (chunk: Uint8Array) => void): void {
  const fd = path === undefined || path === "-" ? 0 : openNamedFile(path);
  const buffer = new Uint8Array(CHUNK_BYTES);
  // The loop is synchronous: Bun's own collector, run from the event loop, never gets a turn.
  const collector = new Collector(false);
  try {
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, buffer);
      } catch (error) {
        // A non-blocking stdin with nothing yet: wait for it rather than fail.
        if ((error as { code?: string }).code === "EAGAIN") {
          Bun.sleepSync(5);
          continue;
        }
        throw error;
      }
      if (n <= 0) return;
      collector.read(n);
      each(n === buffer.length ? buffer : buffer.subarray(0, n));
    }
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}
