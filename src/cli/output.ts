// The terminal side: human messages through consola, always on stderr;
// stdout is kept for results. consola/basic: one line per message, so an
// error is one line for scripts too.
import { createConsola, type ConsolaInstance } from "consola/basic";
import { noColor } from "./stdout.ts";
import { secrets } from "../core/redact.ts";
import { printable } from "../core/text.ts";

export { noColor, writeResult } from "./stdout.ts";

export type Verbosity = "quiet" | "normal" | "verbose";

/** stderr through the redactor and the terminal filter: every human line is redacted and printable. */
export const redactedStderr = {
  write: (text: string): boolean => process.stderr.write(secrets.text(text.split("\n").map(printable).join("\n"))),
  get columns(): number | undefined {
    return process.stderr.columns;
  },
} as unknown as NodeJS.WriteStream;

export function makeLogger(verbosity: Verbosity = "normal"): ConsolaInstance {
  return createConsola({
    level: verbosity === "quiet" ? 1 : verbosity === "verbose" ? 4 : 3,
    stdout: redactedStderr,
    stderr: redactedStderr,
    formatOptions: { colors: !noColor(), date: false, compact: true },
  });
}

export let log: ConsolaInstance = makeLogger();

export function setVerbosity(args: { verbose?: boolean; quiet?: boolean }): Verbosity {
  const verbosity: Verbosity = args.quiet ? "quiet" : args.verbose ? "verbose" : "normal";
  log = makeLogger(verbosity);
  return verbosity;
}
