// `agentport ledger copy --to URL`: every session of this ledger (with its
// phases) into another, by the import rules in one transaction: no session
// twice, phases matched by session and seq, a running phase finished. Copying
// again changes nothing. The way from a box's SQLite file to the fleet's
// PostgreSQL.
import { defineCommand } from "citty";
import { exportSessions, type ExportedSession } from "../../io/ledger.ts";
import { usageError } from "../errors.ts";
import { ledgerCommandArgs, ledgerChoice, openExistingLedger, openLedger } from "../ledger-option.ts";
import { projectLedger } from "../agent-options.ts";
import { setVerbosity } from "../output.ts";
import { mergeInto } from "./import.ts";

const ACTIONS = ["copy"] as const;

export const ledgerCommand = defineCommand({
  meta: {
    name: "ledger",
    description:
      "The ledger itself: `copy --to URL` copies every session of this ledger into another (idempotent, the import rules, one transaction)",
  },
  args: {
    action: { type: "positional", required: true, description: `What to do: ${ACTIONS.join(", ")}` },
    to: { type: "string", valueHint: "URL", description: "copy: the ledger to copy into (postgres://USER@HOST/DB or sqlite:PATH)" },
    json: { type: "boolean", description: "Print the counts as one JSON object" },
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    if (!(ACTIONS as readonly string[]).includes(String(args.action)))
      throw usageError(`ledger ${args.action}: unknown action (known: ${ACTIONS.join(", ")})`);
    if (!args.to) throw usageError("ledger copy needs --to URL: the ledger to copy into (postgres://USER@HOST/DB or sqlite:PATH)");
    const from = await projectLedger(args);
    const to = ledgerChoice({ ledger: args.to }, from.home, null, {});
    const records: ExportedSession[] = [];
    {
      await using source = await openExistingLedger(from);
      if (source !== null) for await (const record of exportSessions(source)) records.push(record);
    }
    await using target = await openLedger(to);
    await mergeInto(target, records, (i) => `${from.shown}: session ${i + 1} of ${records.length}`, Boolean(args.json), "copy");
    return 0;
  },
});
