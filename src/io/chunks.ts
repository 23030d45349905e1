// Read a file (or stdin) in chunks through one reused buffer: memory stays
// flat whatever the file holds, because nothing is allocated per chunk. The
// framer copies what it keeps, so reusing the buffer is safe.
import { closeSync, openSync, readSync } from "node:fs";

const CHUNK_BYTES = 256 * 1024;

/** `path`, or standard input when it is undefined or "-". */
export function readChunks(path: string | undefined, each: (chunk: Uint8Array) => void): void {
  const fd = path === undefined || path === "-" ? 0 : openSync(path, "r");
  const buffer = new Uint8Array(CHUNK_BYTES);
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
      each(n === buffer.length ? buffer : buffer.subarray(0, n));
    }
  } finally {
    if (fd !== 0) closeSync(fd);
  }
}
