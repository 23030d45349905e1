// Results on stdout, and whether to colour: what even `--version` needs,
// kept apart from consola so the shortest paths load no logger. Also what a
// failed write to either stream means: a lost stderr is never a crash, a lost
// stdout reader (`| head`) ends the results, any other stdout failure (a full
// disk) is an environment fault. Every result passes the redactor by value
// (src/core/redact.ts).
import { EXIT } from "../core/exit.ts";
import { secrets } from "../core/redact.ts";
import { CliError } from "./errors.ts";

export const noColor = (): boolean => Boolean(process.env.NO_COLOR) || process.env.TERM === "dumb";

let readerGone = false;

/**
 * Install once, before anything is written. Progress and messages that cannot
 * be written (stderr closed, `2>/dev/full`) are dropped: the run goes on and is
 * recorded. stdout's failures are answered by writeResult, which sees each one.
 */
export function guardStreams(): void {
  process.stderr.on("error", () => {});
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") readerGone = true;
  });
}

/** A result that could not be written for another reason than a reader that went away. */
export function stdoutError(error: NodeJS.ErrnoException): CliError {
  const failed = new CliError(`cannot write the result to stdout: ${error.code ?? error.message}${error.code === "ENOSPC" ? " (no space left on the device)" : ""}`, EXIT.environment);
  // stdout itself failed: no verdict can follow it there.
  failed.printed = true;
  return failed;
}

/**
 * A result on stdout, waiting until it is written so an exit right after
 * loses nothing. A reader that went away (`| head`) ends the results quietly;
 * any other failure throws (exit 5): never exit 0 with an empty file.
 */
export async function writeResult(text: string): Promise<void> {
  if (readerGone) return;
  const safe = secrets.values(text);
  const data = safe.endsWith("\n") ? safe : `${safe}\n`;
  const error = await new Promise<NodeJS.ErrnoException | null | undefined>((resolve) => {
    process.stdout.write(data, resolve);
  });
  if (error === null || error === undefined) return;
  if (error.code === "EPIPE") {
    readerGone = true;
    return;
  }
  throw stdoutError(error);
}
