// Why a resume is refused before any process starts (exit 3): the checks on
// the session's birth host and folder, and the zero-token verdict that says so.
import { existsSync, realpathSync } from "node:fs";
import { adapterOf } from "../../agents/table.ts";
import { SessionFileError, type FoundSession } from "../../agents/origin.ts";
import type { Ledger, SessionRow } from "../../io/ledger.ts";
import { SCHEMA_VERSION, type Verdict } from "../../core/verdict.ts";
import { printable } from "../../core/text.ts";
import { hostLabel, type Host } from "../../io/host.ts";
import { usageError } from "../errors.ts";

const real = (path: string): string => (existsSync(path) ? realpathSync(path) : path);

/** What resume checks before anything is written: the ledger's row, or a session found in the agents' files. */
export interface Found {
  ledger: Ledger | null;
  /** The ledger's row; null when the session was found on disk and is not declared yet. */
  row: SessionRow | null;
  session: Pick<SessionRow, "id" | "agent" | "cwd" | "session_file" | "agent_session_id" | "host" | "machine_id">;
  onDisk: FoundSession | null;
}

/**
 * Why this resume is refused before any process starts (exit 3), or null:
 * another host (the agent's session file is on the birth host), a foreign
 * folder, or a pi session file whose header names another birth folder than
 * the ledger (pi would run the agent in the header's folder).
 */
export function refusal(found: Found, cwd: string, here: Host | null): string | null {
  const session = found.session;
  // A session found on this host's disk was born here; a ledger row without a birth host may come from any host.
  if (found.row !== null && session.machine_id === null) {
    return `refused: session ${session.id} (${session.agent}) has no birth host in the ledger (imported, or declared before hosts were recorded), so its session file may be on any host; resume it on the host it was born on, with a ledger that knows it`;
  }
  if (here !== null && session.machine_id !== null && session.machine_id !== here.machineId) {
    const born = hostLabel({ hostname: session.host, machineId: session.machine_id });
    return `refused: session ${session.id} (${session.agent}) was born on host ${printable(born)} in ${printable(session.cwd)}, and this is host ${hostLabel(here)}; its session file is on its birth host: resume it there`;
  }
  if (real(session.cwd) !== cwd) {
    return `refused: session ${session.id} (${session.agent}) was born in ${printable(session.cwd)}, not in ${cwd}; resume it from its birth folder (cd ${printable(session.cwd)}, or --cwd ${printable(session.cwd)})`;
  }
  // A session file agentport named (pi's) carries its birth folder in its header.
  const row = adapterOf(session.agent);
  if (
    row.axes.sessionId !== "named-file" ||
    row.sessionFileCwd === undefined ||
    session.session_file === null ||
    !existsSync(session.session_file)
  )
    return null;
  let born: string | null;
  try {
    born = row.sessionFileCwd(session.session_file);
  } catch (error) {
    if (error instanceof SessionFileError) throw usageError(error.message);
    throw error;
  }
  if (born === null)
    return `refused: session ${session.id}: its ${session.agent} session file ${session.session_file} has no session header; it was replaced or damaged`;
  if (real(born) !== real(session.cwd)) {
    return `refused: session ${session.id}: its ${session.agent} session file ${session.session_file} says it was born in ${printable(born)}, but the ledger says ${printable(session.cwd)}; the file was edited (restore its header's cwd)`;
  }
  return null;
}

/** The verdict of a resume refused before any process started: zero tokens, for scripts reading --json. */
export function refusedVerdict(session: Found["session"], reason: string): Verdict {
  return {
    schema_version: SCHEMA_VERSION,
    agent: session.agent,
    session_id: session.id,
    status: "refused",
    ok: false,
    text: null,
    envelope: null,
    failure: { kind: "refused", message: reason },
    stop_reason: null,
    cost_micro_usd: 0,
    cost_source: "reported",
    tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
    refused: [],
    env_fault: false,
    fault: null,
    changes: null,
    resume_after: null,
    agent_version: null,
    agent_version_tested: false,
    summary: {
      birth_cwd: session.cwd,
      ...(session.machine_id === null ? {} : { birth_host: session.host ?? "", birth_machine_id: session.machine_id }),
    },
  };
}
