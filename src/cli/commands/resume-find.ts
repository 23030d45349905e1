// Which session a resume continues: by id or prefix from the ledger, else
// from the agents' own files (declared only once the resume proceeds), or the
// newest born in this folder on this host.
import { adapters } from "../../agents/table.ts";
import { SessionFileError, type FoundSession } from "../../agents/origin.ts";
import type { Ledger, SessionRow } from "../../io/ledger.ts";
import type { AgentName } from "../../core/agents.ts";
import { printable } from "../../core/text.ts";
import { openExistingLedger } from "../agent-options.ts";
import type { LedgerChoice } from "../ledger-option.ts";
import { usageError } from "../errors.ts";
import type { Found } from "./resume-refusal.ts";

/** Which session `run --continue` and `resume --last` take: the latest born in this folder on this host (of this agent, when named). */
export interface Latest {
  agent?: AgentName;
}

/**
 * The session: from the ledger, else from the agents' own files. Nothing is
 * written here: a session found on disk is declared only once every flag has
 * been read and every check passed.
 */
export async function findSession(choice: LedgerChoice, idOrPrefix: string, piSessionDir: string): Promise<Found> {
  const existing = await openExistingLedger(choice);
  const resolved = (await existing?.resolveSession(idOrPrefix)) ?? { kind: "unknown" as const };
  if (resolved.kind === "found") return { ledger: existing, row: resolved.session, session: resolved.session, onDisk: null };
  await existing?.close();
  if (resolved.kind === "ambiguous") {
    const lines = resolved.candidates.slice(0, 10).map((s) => `  ${s.id}  ${s.agent}  ${printable(s.cwd)}  ${s.declared_at}`);
    throw usageError(`"${idOrPrefix}" matches ${resolved.candidates.length} sessions; give more of the id:\n${lines.join("\n")}`);
  }
  let found: FoundSession[];
  try {
    found = adapters().flatMap((adapter) => adapter.findSessions(idOrPrefix, { piSessionDir }));
  } catch (error) {
    if (error instanceof SessionFileError) throw usageError(error.message);
    throw error;
  }
  const only = found[0];
  if (found.length !== 1 || only === undefined) {
    if (found.length > 1) throw usageError(`"${idOrPrefix}" matches ${found.length} sessions on disk; give more of the id`);
    throw usageError(`no session "${idOrPrefix}" in the ledger (${choice.shown}) nor in the agents' session folders`);
  }
  // Found in this host's files: born here.
  return {
    ledger: null,
    row: null,
    session: {
      id: only.id,
      agent: only.agent,
      cwd: only.cwd,
      session_file: only.sessionFile,
      agent_session_id: only.id,
      host: null,
      machine_id: null,
    },
    onDisk: only,
  };
}

/** The ledger's row for the session, declaring one found on disk: the first write of a resume. */
export async function declared(ledger: Ledger, found: Found): Promise<SessionRow> {
  if (found.row !== null) return found.row;
  const disk = found.onDisk as FoundSession;
  return ledger.declareSession({ id: disk.id, agent: disk.agent, cwd: disk.cwd, agentSessionId: disk.id, sessionFile: disk.sessionFile });
}

/** The id of the newest session born in `cwd` on this host (of the named agent), or a usage error. */
export async function latestSession(choice: LedgerChoice, cwd: string, latest: Latest): Promise<string> {
  await using ledger = await openExistingLedger(choice, { readonly: true });
  const of = latest.agent === undefined ? "" : ` of ${latest.agent}`;
  const none = usageError(`no session${of} was born in ${printable(cwd)} on this host: start one with agentport run`);
  if (ledger === null) throw none;
  const [newest] = await ledger.listSessions({ cwd, agent: latest.agent, host: ledger.thisHost().machineId, limit: 1 });
  if (newest === undefined) throw none;
  return newest.id;
}
