// The bounded, ANSI-stripped tail of a child's stderr file, for error messages.
import { stripAnsi } from "../core/text.ts";

const TAIL_BYTES = 8 * 1024;

export async function readTail(path: string, maxBytes = TAIL_BYTES): Promise<string> {
  const file = Bun.file(path);
  if (!(await file.exists())) return "";
  const size = file.size;
  const bytes = await file.slice(Math.max(0, size - maxBytes), size).text();
  return stripAnsi(bytes).replace(/\r/g, "").trim();
}
