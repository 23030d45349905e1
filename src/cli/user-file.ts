// JSON the user gave (a file's text, a line of an export): parsed, or refused in
// one line that says why (exit 2). Reading a named file is io/named-file.ts's job.
import { usageError } from "./errors.ts";

/** JSON the user gave (a file, a line of one), or the usage error `label: not JSON (why)`. */
export function userJson(text: string, label: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(`${label}: not JSON (${(error as Error).message.split("\n")[0]})`);
  }
}
