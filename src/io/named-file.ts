// Every file a user names (an export to import, an env file, a schema, an
// @file system prompt, a stream to replay, a run folder's progress) is read
// through here: opened without blocking (a FIFO's open waits for no writer),
// proven a regular file by fstat on the open descriptor (so a swap between a
// check and the open changes nothing), and read with a byte bound, whole or a
// line at a time. A FIFO, a device or a folder is refused with one line
// naming the path and what it is.
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { AgentportError } from "../core/errors.ts";

export type NamedFileFault = "missing" | "not_a_file" | "too_big" | "line_too_long" | "unreadable";

export class NamedFileError extends AgentportError {
  constructor(
    message: string,
    readonly fault: NamedFileFault,
  ) {
    super("named_file", message);
  }
}

const CHUNK_BYTES = 256 * 1024;

/** Why an open failed, in the user's words (with the fix where there is one). */
const OPEN_FAULTS: Record<string, string> = {
  EACCES: "permission denied (make it readable)",
  EPERM: "permission denied (make it readable)",
  ELOOP: "a symbolic link loop",
  ENAMETOOLONG: "the name is too long",
};

/** The bound on a file a person writes and agentport reads whole: an env file, a schema, an @file system prompt, a config. */
export const MAX_WRITTEN_FILE_BYTES = 1024 * 1024;

function whatItIs(stats: Stats): string {
  if (stats.isDirectory()) return "a folder";
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "not a regular file";
}

/** A descriptor of `path`, a regular file; `shown` names it in errors. The caller closes it. */
export function openNamedFile(path: string, shown = path): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "";
    if (code === "ENOENT" || code === "ENOTDIR") throw new NamedFileError(`${shown}: no such file`, "missing");
    throw new NamedFileError(`${shown}: ${OPEN_FAULTS[code] ?? `cannot read (${code || (error as Error).message})`}`, "unreadable");
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new NamedFileError(`${shown}: ${whatItIs(stats)}, not a file: name a regular file`, "not_a_file");
  }
  return fd;
}

/** Read a chunk; a non-blocking stdin with nothing yet is waited for. */
function readChunk(fd: number, buffer: Uint8Array, position: number | null): number {
  for (;;) {
    try {
      return readSync(fd, buffer, 0, buffer.length, position);
    } catch (error) {
      if ((error as { code?: string }).code !== "EAGAIN") throw error;
      Bun.sleepSync(5);
    }
  }
}

/** The whole of a regular file, at most `maxBytes` (a bigger one is refused, never read whole). */
export function readNamedFile(path: string, maxBytes: number, shown = path): string {
  const fd = openNamedFile(path, shown);
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes) throw new NamedFileError(`${shown}: ${size} bytes, at most ${maxBytes}`, "too_big");
    // Read to the end, not to the size seen: a file still growing stops at the bound all the same.
    const buffer = new Uint8Array(Math.min(maxBytes + 1, Math.max(size + 1, 4096)));
    let used = 0;
    for (;;) {
      if (used === buffer.length) throw new NamedFileError(`${shown}: more than ${maxBytes} bytes`, "too_big");
      const n = readChunk(fd, buffer.subarray(used), null);
      if (n <= 0) break;
      used += n;
    }
    return Buffer.from(buffer.buffer, 0, used).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/**
 * Each line of `fd` (a named file's, or 0 for stdin), its number from 1, as
 * it is read: memory holds one line, never more than `maxLineBytes` of it (a
 * longer line is refused as soon as it passes the bound). A last line without
 * a newline counts. Blank lines are handed over too.
 */
export function eachLine(fd: number, maxLineBytes: number, shown: string, each: (line: string, number: number) => void): void {
  const buffer = new Uint8Array(CHUNK_BYTES);
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let number = 0;
  const emit = (tail: Uint8Array) => {
    number++;
    const line = pending.length === 0 ? Buffer.from(tail).toString("utf8") : Buffer.concat([...pending, tail]).toString("utf8");
    pending = [];
    pendingBytes = 0;
    each(line, number);
  };
  const tooLong = () => new NamedFileError(`${shown} line ${number + 1}: more than ${maxLineBytes} bytes`, "line_too_long");
  for (;;) {
    const n = readChunk(fd, buffer, null);
    if (n <= 0) break;
    let start = 0;
    for (;;) {
      const end = buffer.indexOf(10, start);
      if (end === -1 || end >= n) break;
      if (pendingBytes + (end - start) > maxLineBytes) throw tooLong();
      emit(buffer.subarray(start, end));
      start = end + 1;
    }
    if (start < n) {
      pendingBytes += n - start;
      if (pendingBytes > maxLineBytes) throw tooLong();
      pending.push(Buffer.from(buffer.subarray(start, n)));
    }
  }
  if (pendingBytes > 0) emit(new Uint8Array(0));
}
