// The ledger: every session, declared (a committed transaction) before its
// agent process is spawned, so a runner killed with SIGKILL mid-phase still
// leaves its row, and a resume from another folder than the session's birth
// folder, or on another host, can be refused. One interface, asynchronous
// because a server-backed ledger is; the rules live once in ledger-sql.ts,
// the engines behind it in one file each (ledger-sqlite.ts, ledger-postgres.ts).
// Where it lives: ledger-url.ts.
import type { ExportedSession } from "./ledger-export.ts";
import type {
  AgentName,
  FinishPhaseInput,
  ImportCounts,
  PhaseRow,
  ProbeRow,
  Resolution,
  SessionRow,
  SessionWithTotals,
} from "./ledger-rows.ts";
import { thisHost, type Host } from "./host.ts";
import { SqlLedger } from "./ledger-sql.ts";
import type { AgentGroup, RunnerIdentity } from "./proc-identity.ts";
import { openSqlite, openSqliteReadonly } from "./ledger-sqlite.ts";
import { LedgerError } from "./ledger-rows.ts";
import { parseLedgerUrl, type LedgerLocation } from "./ledger-url.ts";

export { ledgerPath, parseLedgerUrl, redactUrl, shownLocation, type LedgerLocation } from "./ledger-url.ts";
export type { Host } from "./host.ts";
export { SCHEMA_VERSION } from "./ledger-schema.ts";
export {
  ExportedPhaseSchema,
  ExportedSessionSchema,
  sessionJson,
  type ExportedPhase,
  type ExportedSession,
  type SessionJson,
} from "./ledger-export.ts";
export {
  endedUncounted,
  LedgerError,
  LedgerUnreachable,
  MIN_PREFIX,
  type AgentName,
  type FinishPhaseInput,
  type ImportCounts,
  type PhaseRow,
  type ProbeRow,
  type Resolution,
  type SessionRow,
  type SessionTotals,
  type SessionWithTotals,
} from "./ledger-rows.ts";

export interface DeclareInput {
  id?: string;
  agent: AgentName;
  cwd: string;
  model?: string | null;
  agentSessionId?: string | null;
  sessionFile?: string | null;
  sessionDir?: string | null;
  parentId?: string | null;
  profile?: string | null;
  /** The request the session is born with, as JSON. */
  request?: string | null;
  /** The first line of the first prompt, redacted and cut: what a listing shows. */
  title?: string | null;
  /** Where AGENTPORT_PHASE and AGENTPORT_RUN_ID are read; process.env by default. */
  env?: Record<string, string | undefined>;
}

export interface StartPhaseInput {
  sessionId: string;
  kind: string;
  name?: string | null;
  runId?: string | null;
  /** Who runs the phase; this process unless given (null: nobody to watch). */
  runner?: RunnerIdentity | null;
  /** The phase's run folder, when it has one. */
  runDir?: string | null;
}

export interface ListFilter {
  agent?: AgentName;
  cwd?: string;
  /** Born on this host: its hostname, or its machine id (or a prefix of it). */
  host?: string;
  limit?: number;
}

/** A birth host the ledger knows, with its number of sessions. */
export interface HostCount {
  host: string | null;
  machine_id: string | null;
  sessions: number;
}

/** Where imported rows come from: someone else's export, or a copy of the user's own ledger. */
export type ImportOrigin = "import" | "copy";

export interface Ledger extends AsyncDisposable {
  /** Where it lives, fit to print: a file path, or a server URL without its password. */
  readonly path: string;
  close(): Promise<void>;
  /** The host this process runs on, as declarations record it. */
  thisHost(): Host;
  declareSession(input: DeclareInput): Promise<SessionRow>;
  /** Record the agent's own session id (and pi's session file) once it is known. */
  bindAgentSession(id: string, agentSessionId: string, sessionFile?: string | null): Promise<SessionRow>;
  startPhase(input: StartPhaseInput): Promise<PhaseRow>;
  /** The agent of a running phase started: its process group. */
  setPhaseAgent(phaseId: number, agent: AgentGroup): Promise<void>;
  /** Every phase not finished yet, oldest first: what `cancel`, `follow` and the reaper look at. */
  runningPhases(): Promise<PhaseRow[]>;
  /** Record a phase's outcome. A phase finishes once: a second finish is an error, not an overwrite. */
  finishPhase(phaseId: number, outcome: FinishPhaseInput): Promise<PhaseRow>;
  getSession(id: string): Promise<SessionRow | null>;
  getPhase(phaseId: number): Promise<PhaseRow | null>;
  /**
   * Find a session by agentport id or agent session id: an exact match first,
   * else a unique prefix of at least MIN_PREFIX characters (ASCII case-insensitive,
   * `%` and `_` literal).
   */
  resolveSession(idOrPrefix: string): Promise<Resolution>;
  /** Newest first, each with totals over its phases. */
  listSessions(filter?: ListFilter): Promise<SessionWithTotals[]>;
  /** One session with its totals, as listSessions gives them. */
  sessionWithTotals(id: string): Promise<SessionWithTotals | null>;
  phases(sessionId: string): Promise<PhaseRow[]>;
  /** The birth hosts in the ledger. */
  hosts(): Promise<HostCount[]>;
  /**
   * Merge exported sessions (`sessions --json` lines) in one transaction: a
   * session already here keeps its columns (empty ones are filled) and must
   * have the same agent and birth folder; a phase is matched by session and
   * seq, and one still running here takes the import's finish. Importing the
   * same lines twice changes nothing. `where(i)` names record i in errors.
   * An `import` marks the new sessions imported and drops every process
   * column (runner, agent group); a `copy` of the user's own ledger keeps them.
   */
  importSessions(records: ExportedSession[], where?: (index: number) => string, origin?: ImportOrigin): Promise<ImportCounts>;
  /** The cached probe of a file, if its size and mtime are unchanged. */
  getProbe(path: string, size: number, mtimeMs: number): Promise<ProbeRow | null>;
  /** Cache a probe; entries for older versions of the same file are dropped. */
  putProbe(path: string, size: number, mtimeMs: number, data: unknown): Promise<void>;
  /** "ok", or the engine's list of problems, one a line. */
  integrityCheck(): Promise<string>;
  /** The schema version the ledger carries. */
  schemaVersion(): Promise<number>;
}

/** The export format (`sessions --json`, `ledger copy`): each session newest first, with its totals and its phases. */
export async function* exportSessions(ledger: Ledger, filter: ListFilter = {}): AsyncGenerator<SessionWithTotals & { phases: PhaseRow[] }> {
  for (const row of await ledger.listSessions(filter)) yield { ...row, phases: await ledger.phases(row.id) };
}

/**
 * Open (creating, and migrating forward) the ledger: at `url` (sqlite:PATH or
 * postgres://…), else `home/ledger.sqlite`. `home` also keeps the machine id
 * of a box that has none of its own. With `readonly`, an existing SQLite file
 * for reading only: nothing created, migrated or written, so reading commands
 * work on a read-only or full home (a server is opened as usual).
 */
export async function connectLedger(home: string, url?: string | LedgerLocation, options: { readonly?: boolean } = {}): Promise<Ledger> {
  const location = typeof url === "object" ? url : locate(home, url);
  const host = () => thisHost(home);
  if (location.kind === "sqlite") return new SqlLedger(await (options.readonly ? openSqliteReadonly : openSqlite)(location.path), host);
  const { openPostgres } = await import("./ledger-postgres.ts"); // only a fleet pays for the client
  return new SqlLedger(await openPostgres(location.url), host);
}

function locate(home: string, url: string | undefined): LedgerLocation {
  const parsed = parseLedgerUrl(url, home);
  if (!parsed.ok) throw new LedgerError(parsed.error);
  return parsed.location;
}
