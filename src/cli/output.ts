// The terminal side: human messages through consola, always on stderr;
// stdout is kept for results. consola/basic: one line per message, so an
// error is one line for scripts too.
import { createConsola, type ConsolaInstance } from "consola/basic";

export const noColor = (): boolean => Boolean(process.env.NO_COLOR) || process.env.TERM === "dumb";

export type Verbosity = "quiet" | "normal" | "verbose";

export function makeLogger(verbosity: Verbosity = "normal"): ConsolaInstance {
  return createConsola({
    level: verbosity === "quiet" ? 1 : verbosity === "verbose" ? 4 : 3,
    stdout: process.stderr,
    stderr: process.stderr,
    formatOptions: { colors: !noColor(), date: false, compact: true },
  });
}

export let log: ConsolaInstance = makeLogger();

export function setVerbosity(args: { verbose?: boolean; quiet?: boolean }): Verbosity {
  const verbosity: Verbosity = args.quiet ? "quiet" : args.verbose ? "verbose" : "normal";
  log = makeLogger(verbosity);
  return verbosity;
}

/**
 * A result on stdout, waiting until it is written so an exit right after
 * loses nothing. A reader that went away (`| head`) ends the wait too: the
 * write's callback fires on flush and on error alike.
 */
export async function writeResult(text: string): Promise<void> {
  const data = text.endsWith("\n") ? text : `${text}\n`;
  await new Promise<void>((resolve) => {
    process.stdout.write(data, () => resolve());
  });
}
