// A session named on the command line (an id or a unique prefix), for the
// reading commands: show, replay, follow, cancel. Unknown and ambiguous are usage errors (exit 2).
import type { Ledger, SessionRow } from "../io/ledger.ts";
import { printable } from "../core/text.ts";
import { usageError } from "./errors.ts";
import { openExistingLedger, type LedgerChoice, type OpenOptions } from "./ledger-option.ts";
import { projectLedger } from "./agent-options.ts";

/** The command-line argument naming the session. */
export const SESSION_ID_ARG = { type: "positional", required: true, description: "Session id or a unique prefix" } as const;

/** The ledger a command naming a session reads; without one, a usage error naming the session. */
export async function ledgerOfNamedSession(choice: LedgerChoice, idOrPrefix: string, options?: OpenOptions): Promise<Ledger> {
  const ledger = await openExistingLedger(choice, options);
  if (ledger === null) throw usageError(`no session "${printable(idOrPrefix)}": no ledger yet (${choice.shown})`);
  return ledger;
}

export async function namedSession(ledger: Ledger, idOrPrefix: string, shown: string): Promise<SessionRow> {
  const found = await ledger.resolveSession(idOrPrefix);
  if (found.kind === "unknown") throw usageError(`no session "${printable(idOrPrefix)}" in the ledger (${shown})`);
  if (found.kind === "ambiguous")
    throw usageError(
      `"${printable(idOrPrefix)}" matches ${found.candidates.length} sessions: ${found.candidates
        .slice(0, 5)
        .map((s) => printable(s.id))
        .join(", ")}`,
    );
  return found.session;
}

/** The session a command names and the ledger it is in; disposing of it closes the ledger. */
export interface OpenedSession extends AsyncDisposable {
  ledger: Ledger;
  session: SessionRow;
  choice: LedgerChoice;
}

/** The ledger of the command's arguments (--ledger, --home, the project's), opened, and the session `idOrPrefix` names in it. */
export async function openNamedSession(args: Record<string, unknown>, idOrPrefix: string, options?: OpenOptions): Promise<OpenedSession> {
  const choice = await projectLedger(args);
  const ledger = await ledgerOfNamedSession(choice, idOrPrefix, options);
  try {
    const session = await namedSession(ledger, idOrPrefix, choice.shown);
    return { ledger, session, choice, [Symbol.asyncDispose]: () => ledger[Symbol.asyncDispose]() };
  } catch (error) {
    await ledger[Symbol.asyncDispose]();
    throw error;
  }
}
