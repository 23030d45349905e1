// The bounded, ANSI-stripped tail of a child's stderr, for error messages.
import { stripAnsi } from "../core/text.ts";

export const TAIL_BYTES = 8 * 1024;

/** What an error message may quote of stderr's last bytes. */
export function cleanTail(text: string): string {
  return stripAnsi(text).replace(/\r/g, "").trim();
}

export async function readTail(path: string, maxBytes = TAIL_BYTES): Promise<string> {
  const file = Bun.file(path);
  if (!(await file.exists())) return "";
  const size = file.size;
  return cleanTail(await file.slice(Math.max(0, size - maxBytes), size).text());
}
