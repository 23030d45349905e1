// The terminal side: human messages through consola, always on stderr;
// stdout is kept for results. consola/core with a reporter of our own (what
// consola/basic prints, without its cost: it sets up process.stdout and
// process.stderr): one line per message, so an error is one line for scripts too.
import { createConsola, type ConsolaInstance, type LogObject } from "consola/core";
import { writeStderr } from "./fd-out.ts";
import { secrets } from "../core/redact.ts";
import { printable } from "../core/text.ts";
import { SCHEMA_VERSION } from "../core/verdict.ts";

export { writeResult } from "./stdout.ts";

export type Verbosity = "quiet" | "normal" | "verbose";

/** stderr through the redactor and the terminal filter: every human line is redacted and printable. */
function redactedStderr(text: string): void {
  writeStderr(secrets.text(text.split("\n").map(printable).join("\n")));
}

/** A message's words: its strings as they are, an error's message, anything else as JSON. */
const messageOf = (entry: LogObject): string =>
  entry.args.map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : JSON.stringify(a))).join(" ");

const levelOf = (verbosity: Verbosity): number => (verbosity === "quiet" ? 1 : verbosity === "verbose" ? 4 : 3);

/** `[type] message`, as consola/basic prints it. */
export function makeLogger(verbosity: Verbosity = "normal"): ConsolaInstance {
  return createConsola({
    level: levelOf(verbosity),
    reporters: [
      { log: (entry) => redactedStderr(`${[`[${entry.type}]`, ...(entry.tag ? [`[${entry.tag}]`] : []), messageOf(entry)].join(" ")}\n`) },
    ],
  });
}

/** What a JSON log record says about its run: the progress view fills it in as the session becomes known. */
export const logSubject: { session_id: string | null; agent: string | null } = { session_id: null, agent: null };

/** Under --progress json every human message is one NDJSON record too: stderr stays pure NDJSON. */
function makeJsonLogger(verbosity: Verbosity): ConsolaInstance {
  return createConsola({
    level: levelOf(verbosity),
    reporters: [
      {
        log: (entry) =>
          redactedStderr(
            `${JSON.stringify({ schema_version: SCHEMA_VERSION, ts: new Date().toISOString(), ...logSubject, kind: "log", level: entry.type, message: messageOf(entry) })}\n`,
          ),
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
