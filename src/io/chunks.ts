// Read a file (or stdin) in chunks through one reused buffer: memory stays
// flat whatever the file holds, because nothing is allocated per chunk. The
// framer copies what it keeps, so reusing the buffer is safe.
//
// The loop is synchronous, so Bun's collector, which runs from the event
// loop, never gets a turn: the garbage of the records reduced so far would
// pile up (a 30 MB stream of small records peaked past 90 MB). A collection
// (not a full one) every few MiB keeps the peak flat (README, Benchmarks).
import { closeSync, openSync, readSync } from "node:fs";

const CHUNK_BYTES = 256 * 1024;
const COLLECT_EVERY_BYTES = 4 * 1024 * 1024;

/** `path`, or standard input when it is undefined or "-". */
export function readChunks(path: string | undefined, each: (chunk: Uint8Array) => void): void {
  const fd = path === undefined || path === "-" ? 0 : openSync(path, "r");
  const buffer = new Uint8Array(CHUNK_BYTES);
  let uncollected = 0;
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
      uncollected += n;
      if (uncollected >= COLLECT_EVERY_BYTES) {
        uncollected = 0;
        Bun.gc(false);
      }
      each(n === buffer.length ? buffer : buffer.subarray(0, n));
    }
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}
