// `agentport import FILE`: merge `agentport sessions --json` lines (from this
// or other machines, concatenated or not) into the local ledger, in one
// transaction: a bad line names its number and nothing is written.
import { defineCommand } from "citty";
import { closeSync } from "node:fs";
import { eachLine, NamedFileError, openNamedFile } from "../../io/named-file.ts";
import { issueLine } from "../../config/schema.ts";
import {
  ExportedSessionSchema,
  LedgerError,
  LedgerUnreachable,
  type ExportedSession,
  type ImportCounts,
  type ImportOrigin,
  type Ledger,
} from "../../io/ledger.ts";
import { ledgerCommandArgs, openLedger } from "../ledger-option.ts";
import { projectLedger } from "../agent-options.ts";
import { environmentError, usageError } from "../errors.ts";
import { userJson } from "../user-file.ts";
import { log, setVerbosity, writeResult } from "../output.ts";
import { printable } from "../../core/text.ts";

// Bounds on what another ledger may bring: its strings are printed and stored here.
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
export const MAX_FIELD_CHARS = 64 * 1024;
export const MAX_ID_CHARS = 200;
const ID = /^[A-Za-z0-9._-]+$/;
const ID_FIELDS = new Set(["id", "agent_session_id", "parent_id", "run_id", "session_id"]);

/** The first field of an exported record that breaks a bound, as "path: why", or null. */
export function unboundedField(value: unknown, path = ""): string | null {
  if (typeof value === "string") {
    if (value.length > MAX_FIELD_CHARS) return `${path}: ${value.length} characters, at most ${MAX_FIELD_CHARS}`;
    const key = path.split(".").at(-1) ?? "";
    // A phase's numeric id is local; every string id is checked.
    if (ID_FIELDS.has(key) && !path.includes("details")) {
      if (value.length > MAX_ID_CHARS || !ID.test(value) || value.includes(".."))
        return `${path}: an id is 1 to ${MAX_ID_CHARS} characters of A-Z a-z 0-9 . _ - and never ".."`;
    }
    return null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = unboundedField(value[i], `${path}[${i}]`);
      if (found !== null) return found;
    }
    return null;
  }
  if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value)) {
      const found = unboundedField(child, path === "" ? key : `${path}.${key}`);
      if (found !== null) return found;
    }
  }
  return null;
}

/** One line of an export, validated; `at` names it. Throws one usage error naming what is wrong. */
export function parseLine(raw: string, at: string): ExportedSession {
  const line = raw.trim();
  const value = userJson(line, at);
  const unbounded = unboundedField(value);
  if (unbounded !== null) throw usageError(`${at}: ${printable(unbounded)} (nothing was imported)`);
  const parsed = ExportedSessionSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw usageError(`${at}: ${issue ? printable(issueLine(issue, value)) : "not a session"}`);
  }
  return parsed.data;
}

/**
 * The lines of an export (a named regular file, or stdin for "-"), streamed:
 * memory holds the records and one line of at most MAX_LINE_BYTES, however
 * long the input. Blank lines are skipped; the first bad line is one usage error.
 */
export function readExport(file: string): { records: ExportedSession[]; lines: number[]; name: string } {
  const name = file === "-" ? "stdin" : file;
  const records: ExportedSession[] = [];
  const lines: number[] = [];
  let fd = 0;
  try {
    if (file !== "-") fd = openNamedFile(file);
    eachLine(fd, MAX_LINE_BYTES, name, (raw, number) => {
      if (raw.trim() === "") return;
      records.push(parseLine(raw, `${name} line ${number}`));
      lines.push(number);
    });
  } catch (error) {
    if (error instanceof NamedFileError)
      throw usageError(
        `${error.message}${error.fault === "line_too_long" ? `; an exported session is at most ${MAX_LINE_BYTES} bytes` : ""} (nothing was imported)`,
      );
    throw error;
  } finally {
    if (fd !== 0) closeSync(fd);
  }
  return { records, lines, name };
}

/** Merge records into a ledger by the import rules, and say what changed; a conflict is a usage error, an unreachable ledger an environment one. */
export async function mergeInto(
  ledger: Ledger,
  records: ExportedSession[],
  where: (i: number) => string,
  json: boolean,
  origin: ImportOrigin = "import",
): Promise<void> {
  let counts: ImportCounts;
  try {
    counts = await ledger.importSessions(records, where, origin);
  } catch (error) {
    if (error instanceof LedgerUnreachable) throw environmentError(`ledger: ${error.message} (nothing was imported)`);
    if (error instanceof LedgerError) throw usageError(`${error.message} (nothing was imported)`);
    throw error;
  }
  if (json) await writeResult(JSON.stringify({ ledger: ledger.path, ...counts }));
  else {
    log.info(
      `${ledger.path}: ${counts.sessions_added} session(s) added, ${counts.sessions_merged} already here; ` +
        `${counts.phases_added} phase(s) added, ${counts.phases_finished} finished, ${counts.phases_unchanged} unchanged`,
    );
  }
}

export const importCommand = defineCommand({
  meta: {
    name: "import",
    description:
      "Merge sessions exported by `agentport sessions --json` into this ledger: idempotent, one transaction, a session is never duplicated (a phase is matched by session and seq)",
  },
  args: {
    file: { type: "positional", required: true, description: 'The export: one JSON session per line ("-" reads stdin)' },
    json: { type: "boolean", description: "Print the counts as one JSON object" },
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const { records, lines, name } = readExport(String(args.file));
    await using ledger = await openLedger(await projectLedger(args));
    await mergeInto(ledger, records, (i) => `${name} line ${lines[i]}`, Boolean(args.json));
    return 0;
  },
});
