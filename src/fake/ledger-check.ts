// A fake agent's proof that agentport declared the session before starting
// it: with $AGENTPORT_FAKE_CHECK_LEDGER naming a ledger file, the fake looks
// its own session id up there the moment it starts, and refuses to run when
// the row is missing.
import { Database } from "bun:sqlite";

/** null when the row is there (or no check was asked for), else the reason. */
export function missingDeclaration(sessionId: string, env = process.env): string | null {
  const path = env.AGENTPORT_FAKE_CHECK_LEDGER;
  if (!path) return null;
  let db: Database | undefined;
  try {
    db = new Database(path, { readonly: true });
    const row = db
      .query<{ id: string }, [string, string]>("SELECT id FROM sessions WHERE id = ? OR agent_session_id = ?")
      .get(sessionId, sessionId);
    return row ? null : `session ${sessionId} is not in the ledger ${path} at start`;
  } catch (error) {
    return `cannot read the ledger ${path}: ${(error as Error).message}`;
  } finally {
    db?.close();
  }
}
