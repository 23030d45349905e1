// `agentport import FILE`: merge `agentport sessions --json` lines (from this
// or other machines, concatenated or not) into the local ledger, in one
// transaction: a bad line names its number and nothing is written.
import { defineCommand } from "citty";
import { readFileSync } from "node:fs";
import { issueLine } from "../../config/schema.ts";
import { ExportedSessionSchema, LedgerError, type ExportedSession } from "../../io/ledger.ts";
import { stateHome } from "../../io/paths.ts";
import { openLedger } from "../agent-options.ts";
import { verbosityArgs } from "../common.ts";
import { usageError } from "../errors.ts";
import { log, setVerbosity, writeResult } from "../output.ts";

/** The lines of an export, validated; blank lines are skipped. Throws one usage error naming the first bad line. */
export function parseExport(text: string, name: string): { records: ExportedSession[]; lines: number[] } {
  const records: ExportedSession[] = [];
  const lines: number[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "") return;
    const at = `${name} line ${i + 1}`;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw usageError(`${at}: not JSON (${(error as Error).message.split("\n")[0]})`);
    }
    const parsed = ExportedSessionSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw usageError(`${at}: ${issue ? issueLine(issue, value) : "not a session"}`);
    }
    records.push(parsed.data);
    lines.push(i + 1);
  });
  return { records, lines };
}

export const importCommand = defineCommand({
  meta: {
    name: "import",
    description: "Merge sessions exported by `agentport sessions --json` into this ledger: idempotent, one transaction, a session is never duplicated (a phase is matched by session and seq)",
  },
  args: {
    file: { type: "positional", required: true, description: 'The export: one JSON session per line ("-" reads stdin)' },
    json: { type: "boolean", description: "Print the counts as one JSON object" },
    home: { type: "string", description: "State folder (else $AGENTPORT_HOME, $XDG_STATE_HOME/agentport, ~/.local/state/agentport)" },
    ...verbosityArgs,
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
    await using ledger = await openLedger(stateHome(args.home));
    let counts;
    try {
      counts = await ledger.importSessions(records, (i) => `${name} line ${lines[i]}`);
    } catch (error) {
      if (error instanceof LedgerError) throw usageError(`${error.message} (nothing was imported)`);
      throw error;
    }
    if (args.json) await writeResult(JSON.stringify({ ledger: ledger.path, ...counts }));
    else {
      log.info(
        `${ledger.path}: ${counts.sessions_added} session(s) added, ${counts.sessions_merged} already here; ` +
          `${counts.phases_added} phase(s) added, ${counts.phases_finished} finished, ${counts.phases_unchanged} unchanged`,
      );
    }
    return 0;
  },
});
