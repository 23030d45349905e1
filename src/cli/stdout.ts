// Results on stdout: what even `--version` needs, kept apart from consola so
// the shortest paths load no logger. Also what a failed write to either
// stream means: a lost stderr is never a crash, a lost stdout reader
// (`| head`) ends the results, any other stdout failure (a full disk) is an
// environment fault. Every result passes the redactor by value
// (src/core/redact.ts).
import { secrets } from "../core/redact.ts";
import { AgentportError } from "./errors.ts";
import { writeFd } from "./fd-out.ts";

let readerGone = false;

/** A result that could not be written for another reason than a reader that went away. */
export function stdoutError(error: NodeJS.ErrnoException): AgentportError {
  const failed = new AgentportError(
    "environment",
    `cannot write the result to stdout: ${error.code ?? error.message}${error.code === "ENOSPC" ? " (no space left on the device)" : ""}`,
  );
  // stdout itself failed: no verdict can follow it there.
  failed.printed = true;
  return failed;
}

/**
 * A result on stdout, written before this returns so an exit right after
 * loses nothing. A reader that went away (`| head`) ends the results quietly;
 * any other failure throws (exit 5): never exit 0 with an empty file.
 */
export async function writeResult(text: string): Promise<void> {
  if (readerGone) return;
  const safe = secrets.values(text);
  const error = writeFd(1, safe.endsWith("\n") ? safe : `${safe}\n`);
  if (error === null) return;
  if (error.code === "EPIPE") {
    readerGone = true;
    return;
  }
  throw stdoutError(error);
}

/**
 * For what still writes through process.stdout and process.stderr (the fake
 * agents): install once, before anything is written there, so a closed
 * stderr or a reader that went away is no crash.
 */
export function guardStreams(): void {
  process.stderr.on("error", () => {});
  process.stdout.on("error", () => {});
}
