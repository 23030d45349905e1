// A file the user named (an @FILE, a stream to replay): read, or refused in one
// line that says why (exit 2), never an fs error's stack.
import { closeSync, openSync, readFileSync, statSync } from "node:fs";
import { usageError, type CliError } from "./errors.ts";

const REASONS: Record<string, string> = {
  ENOENT: "no such file",
  ENOTDIR: "no such file",
  EACCES: "permission denied (make it readable)",
  EPERM: "permission denied (make it readable)",
  ELOOP: "a symbolic link loop",
  ENAMETOOLONG: "the name is too long",
};

/** One line for why `path` cannot be read, named by `label` (`--append-system-prompt @x`). */
function unreadable(label: string, error: unknown): CliError {
  const code = (error as { code?: string }).code ?? "";
  return usageError(`${label}: ${REASONS[code] ?? `cannot be read (${code || (error as Error).message})`}`);
}

/** Throws the usage error when `path` is not a readable regular file (a folder, a missing or unreadable file). */
export function checkReadable(path: string, label: string): void {
  let fd: number;
  try {
    if (statSync(path).isDirectory()) throw usageError(`${label}: a folder, not a file`);
    fd = openSync(path, "r");
  } catch (error) {
    if ((error as { exitCode?: number }).exitCode !== undefined) throw error;
    throw unreadable(label, error);
  }
  closeSync(fd);
}

/** The text of a file the user named, or the usage error saying why not. */
export function readUserFile(path: string, label: string): string {
  checkReadable(path, label);
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    throw unreadable(label, error);
  }
}

/** JSON the user gave (a file, a line of one), or the usage error `label: not JSON (why)`. */
export function userJson(text: string, label: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(`${label}: not JSON (${(error as Error).message.split("\n")[0]})`);
  }
}
