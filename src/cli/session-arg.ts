// A session named on the command line (an id or a unique prefix), for the
// reading commands: show, replay, follow, cancel. Unknown and ambiguous are usage errors (exit 2).
import type { Ledger, SessionRow } from "../io/ledger.ts";
import { printable } from "../core/text.ts";
import { usageError } from "./errors.ts";

export async function namedSession(ledger: Ledger, idOrPrefix: string, shown: string): Promise<SessionRow> {
  const found = await ledger.resolveSession(idOrPrefix);
  if (found.kind === "unknown") throw usageError(`no session "${printable(idOrPrefix)}" in the ledger (${shown})`);
  if (found.kind === "ambiguous") throw usageError(`"${printable(idOrPrefix)}" matches ${found.candidates.length} sessions: ${found.candidates.slice(0, 5).map((s) => printable(s.id)).join(", ")}`);
  return found.session;
}
