// `agentport import FILE`: merge `agentport sessions --json` lines (from this
// or other machines, concatenated or not) into the local ledger, in one
// transaction: a bad line names its number and nothing is written.
import { defineCommand } from "citty";
import { readFileSync } from "node:fs";
import { issueLine } from "../../config/schema.ts";
import { ExportedSessionSchema, LedgerError, LedgerUnreachable, type ExportedSession, type Ledger } from "../../io/ledger.ts";
import { ledgerCommandArgs, openLedger } from "../ledger-option.ts";
import { projectLedger } from "../agent-options.ts";
import { environmentError, usageError } from "../errors.ts";
import { userJson } from "../user-file.ts";
import { log, setVerbosity, writeResult } from "../output.ts";
import { printable } from "../../core/text.ts";

// Bounds on what another ledger may bring: its strings are printed and stored here.
export const MAX_LINE_CHARS = 16 * 1024 * 1024;
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
      if (value.length > MAX_ID_CHARS || !ID.test(value) || value.includes("..")) return `${path}: an id is 1 to ${MAX_ID_CHARS} characters of A-Z a-z 0-9 . _ - and never ".."`;
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

/** The lines of an export, validated; blank lines are skipped. Throws one usage error naming the first bad line. */
export function parseExport(text: string, name: string): { records: ExportedSession[]; lines: number[] } {
  const records: ExportedSession[] = [];
  const lines: number[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const at = `${name} line ${i + 1}`;
    if (line.length > MAX_LINE_CHARS) throw usageError(`${at}: ${line.length} characters; an exported session is at most ${MAX_LINE_CHARS} (nothing was imported)`);
    const value = userJson(line, at);
    const unbounded = unboundedField(value);
    if (unbounded !== null) throw usageError(`${at}: ${printable(unbounded)} (nothing was imported)`);
    const parsed = ExportedSessionSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw usageError(`${at}: ${issue ? printable(issueLine(issue, value)) : "not a session"}`);
    }
    records.push(parsed.data);
    lines.push(i + 1);
  });
  return { records, lines };
}

/** Merge records into a ledger by the import rules, and say what changed; a conflict is a usage error, an unreachable ledger an environment one. */
export async function mergeInto(ledger: Ledger, records: ExportedSession[], where: (i: number) => string, json: boolean): Promise<void> {
  let counts;
  try {
    counts = await ledger.importSessions(records, where);
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
    description: "Merge sessions exported by `agentport sessions --json` into this ledger: idempotent, one transaction, a session is never duplicated (a phase is matched by session and seq)",
  },
  args: {
    file: { type: "positional", required: true, description: 'The export: one JSON session per line ("-" reads stdin)' },
    json: { type: "boolean", description: "Print the counts as one JSON object" },
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const file = String(args.file);
    let text: string;
    try {
      text = file === "-" ? await Bun.stdin.text() : readFileSync(file, "utf8");
    } catch (error) {
      throw usageError(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    const name = file === "-" ? "stdin" : file;
    const { records, lines } = parseExport(text, name);
    await using ledger = await openLedger(await projectLedger(args));
    await mergeInto(ledger, records, (i) => `${name} line ${lines[i]}`, Boolean(args.json));
    return 0;
  },
});
