// What every command that opens the ledger does first: finish what runners
// that are gone left open — a finish kept aside when the disk was full is
// recorded as it was.
import type { Ledger } from "./ledger.ts";
import { commitKept } from "./unrecorded.ts";

export interface Tidied {
  /** Finishes kept aside (a full disk) and recorded now. */
  recorded: number;
}

/** Best effort: a ledger that cannot be written now (read-only, still full) is tidied by a later command. */
export async function tidyLedger(ledger: Ledger, home: string): Promise<Tidied> {
  const tidied: Tidied = { recorded: 0 };
  try {
    tidied.recorded = await commitKept(home, ledger);
  } catch {
    // the next command tries again
  }
  return tidied;
}
