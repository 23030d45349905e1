// An export merged into the ledger, in the caller's one transaction: new
// sessions and phases added, known ones only filled (never overwritten), a
// phase running here finished by the import; two histories of one session
// refused, naming the record.
import { LedgerError, PHASE_COLUMNS, PHASE_OUTCOME, SESSION_MERGED, type ImportCounts, type Outcome } from "./ledger-rows.ts";
import { phaseRecordOf, sessionOf } from "./ledger-convert.ts";
import type { ExportedSession } from "./ledger-export.ts";
import { FINISH_BY_SEQ, INSERT_PHASE, INSERT_SESSION, MERGE_SESSION, getSession, pick, type Statements } from "./ledger-statements.ts";

/** The columns that name a process of this host: an import never carries them (cancel would signal it, resume wait for it). */
const NO_PROCESS = { runner_pid: null, runner_start: null, runner_host: null, agent_pgid: null, agent_start: null } as const;

/**
 * `where` names a record in a message; `imported` marks the rows someone
 * else's data (null: this host's own, re-read); `lock` is the engine's row lock.
 */
export async function mergeExport(
  tx: Statements,
  records: ExportedSession[],
  o: { where: (index: number) => string; imported: string | null; lock: string },
): Promise<ImportCounts> {
  const { where, imported } = o;
  // Oldest first, so the new rows keep the export's order (newest first, on ties the first line).
  const order = records
    .map((_, i) => i)
    .sort((a, b) =>
      records[a]!.declared_at < records[b]!.declared_at ? -1 : records[a]!.declared_at > records[b]!.declared_at ? 1 : b - a,
    );
  const counts: ImportCounts = { sessions_added: 0, sessions_merged: 0, phases_added: 0, phases_finished: 0, phases_unchanged: 0 };
  for (const i of order) {
    const r = records[i]!;
    const fail = (why: string): never => {
      throw new LedgerError(`${where(i)}: session ${r.id}: ${why}`);
    };
    // An import is someone else's data: marked as such, and never naming a process of this host.
    const row = imported === null ? sessionOf(r) : { ...sessionOf(r), imported_at: imported };
    const existing = await getSession(tx, r.id, o.lock);
    if (existing === null) {
      await tx.run(INSERT_SESSION, row);
      counts.sessions_added++;
    } else {
      if (existing.agent !== row.agent) fail(`it is a ${existing.agent} session in this ledger, ${row.agent} in the import`);
      if (existing.cwd !== row.cwd) fail(`it was born in ${existing.cwd} in this ledger, ${row.cwd} in the import`);
      if (existing.machine_id !== null && row.machine_id !== null && existing.machine_id !== row.machine_id) {
        fail(`it was born on machine ${existing.machine_id} in this ledger, ${row.machine_id} in the import`);
      }
      await tx.run(MERGE_SESSION, pick(row, ["id", ...SESSION_MERGED]));
      counts.sessions_merged++;
    }
    for (const p of [...r.phases].sort((a, b) => a.seq - b.seq)) {
      const record = imported === null ? phaseRecordOf(r.id, p) : { ...phaseRecordOf(r.id, p), ...NO_PROCESS };
      const here = await tx.get<{ started_at: string; ended_at: string | null }>(
        `SELECT started_at, ended_at FROM phases WHERE session_id = $session_id AND seq = $seq`,
        { session_id: r.id, seq: p.seq },
      );
      if (here === null) {
        await tx.get(INSERT_PHASE, pick(record, ["session_id", ...PHASE_COLUMNS]));
        counts.phases_added++;
      } else if (here.started_at !== p.started_at) {
        fail(`phase ${p.seq} started at ${here.started_at} in this ledger, at ${p.started_at} in the import: two different histories`);
      } else if (here.ended_at === null && p.ended_at !== null) {
        await tx.run(FINISH_BY_SEQ, { ...pick(record as Outcome, PHASE_OUTCOME), session_id: r.id, seq: p.seq });
        counts.phases_finished++;
      } else {
        counts.phases_unchanged++;
      }
    }
  }
  return counts;
}
