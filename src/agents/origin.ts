// Where a session was born, when the ledger does not know it: what every
// agent's origin lookup (src/agents/<name>/origin.ts) shares.
import { openSync, readSync, closeSync } from "node:fs";
import type { AgentName } from "../io/ledger.ts";

export interface FoundSession {
  agent: AgentName;
  id: string;
  cwd: string;
  sessionFile: string | null;
}

const HEAD_BYTES = 64 * 1024;

/** The first lines of a file, bounded: a transcript can be huge. */
export function headLines(path: string): string[] {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const n = readSync(fd, buffer, 0, HEAD_BYTES, 0);
    return buffer.subarray(0, n).toString("utf8").split("\n").slice(0, -1);
  } finally {
    closeSync(fd);
  }
}

export function parse(line: string | undefined): Record<string, unknown> | null {
  if (!line) return null;
  try {
    const value = JSON.parse(line);
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** A session file whose header cannot be believed: one line naming the file. */
export class SessionFileError extends Error {
  override readonly name = "SessionFileError";
}
