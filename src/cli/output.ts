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

/** What a JSON log record says about its run: the progress view fills it in as the session becomes known. */
export const logSubject: { session_id: string | null; agent: string | null } = { session_id: null, agent: null };

/** Under --progress json every human message is one NDJSON record too: stderr stays pure NDJSON. */
function makeJsonLogger(verbosity: Verbosity): ConsolaInstance {
  return createConsola({
    level: verbosity === "quiet" ? 1 : verbosity === "verbose" ? 4 : 3,
    reporters: [
      {
        log: (entry) => {
          const message = entry.args.map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : JSON.stringify(a))).join(" ");
          redactedStderr.write(`${JSON.stringify({ ts: new Date().toISOString(), ...logSubject, kind: "log", level: entry.type, message })}\n`);
        },
      },
    ],
  });
}

export let log: ConsolaInstance = makeLogger();

export function setVerbosity(args: { verbose?: boolean; quiet?: boolean; progress?: unknown }): Verbosity {
  const verbosity: Verbosity = args.quiet ? "quiet" : args.verbose ? "verbose" : "normal";
  log = args.progress === "json" ? makeJsonLogger(verbosity) : makeLogger(verbosity);
  return verbosity;
}

/** The progress mode: what was asked (an explicit --progress json outlives -q), else off when quiet, else `fallback`. */
export function progressMode<M extends string>(asked: unknown, verbosity: Verbosity, fallback: M): M | "off" {
  if (typeof asked === "string") return asked === "json" || verbosity !== "quiet" ? (asked as M) : "off";
  return verbosity === "quiet" ? "off" : fallback;
}
