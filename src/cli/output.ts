// The terminal side: human messages through consola, always on stderr;
// stdout is kept for results. consola/basic: one line per message, so an
// error is one line for scripts too.
import { createConsola, type ConsolaInstance } from "consola/basic";
import { noColor } from "./stdout.ts";

export { noColor, writeResult } from "./stdout.ts";

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
