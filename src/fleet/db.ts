// The queue's tables on the fleet's PostgreSQL (created if absent, columns
// added to a table an older agentport made), a task's row as the commands see
// it, and the retry after a lost connection.
import type { SQL } from "bun";
import { retried } from "../io/ledger-postgres.ts";
import type { TaskState } from "./rules.ts";

/** Pauses after a lost connection (about 7 s in all): a restart, a killed backend. */
const BACKOFF_MS = [50, 200, 500, 1000, 2000, 3500];

/** `attempt`, again after a lost connection; `again` tells the body it is a retry. */
export async function retrying<T>(attempt: (again: boolean) => Promise<T>): Promise<T> {
  for (let tries = 0; ; tries++) {
    try {
      return await attempt(tries > 0);
    } catch (error) {
      const pause = BACKOFF_MS[tries];
      if (pause === undefined || !retried(error)) throw error;
      await Bun.sleep(pause);
    }
  }
}

const CREATE_LOCK = 42170029;

const DDL = `CREATE TABLE IF NOT EXISTS tasks (
  id TEXT PRIMARY KEY,
  key TEXT UNIQUE,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'interrupted', 'cancelled')),
  prompt TEXT NOT NULL,
  request JSON NOT NULL,
  repo TEXT NOT NULL,
  ref TEXT,
  attempt INTEGER NOT NULL DEFAULT 0,
  runs INTEGER NOT NULL DEFAULT 0,
  retries INTEGER NOT NULL DEFAULT 0,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  worker TEXT,
  lease_expires_at TIMESTAMPTZ,
  agent_started BOOLEAN NOT NULL DEFAULT false,
  verdict JSON,
  exit_code INTEGER,
  finished_at TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS tasks_queued ON tasks (created_at) WHERE state = 'queued';
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS requires TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS cancel_requested BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS resume_session TEXT;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS birth_machine TEXT;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS birth_host TEXT;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS birth_folder TEXT;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS bundle BYTEA;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS commit TEXT;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS queue TEXT NOT NULL DEFAULT 'default';
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS patch BYTEA;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS patch_bytes INTEGER;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS stream BYTEA;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS stream_bytes INTEGER;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS spent_micro_usd BIGINT;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS started_at TIMESTAMPTZ;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS group_id TEXT;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS arm INTEGER;
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS gates TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE tasks ADD COLUMN IF NOT EXISTS gate_results JSON;
CREATE INDEX IF NOT EXISTS tasks_group ON tasks (group_id, arm) WHERE group_id IS NOT NULL;
CREATE TABLE IF NOT EXISTS task_groups (
  id TEXT PRIMARY KEY,
  key TEXT UNIQUE,
  arms INTEGER NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE TABLE IF NOT EXISTS queues (
  name TEXT PRIMARY KEY,
  budget_micro_usd BIGINT NOT NULL CHECK (budget_micro_usd >= 0),
  per TEXT NOT NULL CHECK (per IN ('hour', 'day', 'week', 'month'))
);
CREATE TABLE IF NOT EXISTS workers (
  id TEXT PRIMARY KEY,
  hostname TEXT NOT NULL,
  machine_id TEXT NOT NULL,
  workspaces TEXT NOT NULL,
  labels TEXT[] NOT NULL,
  agents TEXT[] NOT NULL,
  concurrency INTEGER NOT NULL,
  started_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at TIMESTAMPTZ NOT NULL
);`;

/** Create the tables (once per database, under an advisory lock). */
export const createTables = (sql: SQL): Promise<unknown> =>
  sql.begin(async (tx) => {
    await tx.unsafe(`SELECT pg_advisory_xact_lock(${CREATE_LOCK})`);
    await tx.unsafe(DDL);
  });

export const iso = (column: string, as = column) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${as}`;
/** A text array as JSON text, read back with JSON.parse. */
export const jsonArray = (column: string, as = column) => `array_to_json(${column})::text AS ${as}`;
/** A JSON text parameter as a text array. */
export const textArray = (param: string) => `ARRAY(SELECT json_array_elements_text(${param}::text::json))`;

export const COLUMNS = `id, key, state, prompt, request::text AS request, repo, ref, attempt, runs, retries, ${iso("created_at")}, worker, ${iso("lease_expires_at")}, agent_started, verdict::text AS verdict, exit_code, ${iso("finished_at")}, ${jsonArray("requires")}, cancel_requested, resume_session, birth_machine, birth_host, birth_folder, octet_length(bundle) AS bundle_bytes, commit, queue, patch_bytes, patch IS NOT NULL AS patch_stored, stream_bytes, stream IS NOT NULL AS stream_stored, spent_micro_usd::float8 AS spent_micro_usd, ${iso("started_at")}, group_id, arm, ${jsonArray("gates")}, gate_results::text AS gate_results`;

/** A new task's INSERT (queued; nothing done on a taken key), its row returned: `group`, an arm's group and number. */
export function insertTask(
  id: string,
  t: NewTask,
  group: { id: string; arm: number } | null = null,
): [string, (string | number | Uint8Array | null)[]] {
  const r = t.resume;
  return [
    `INSERT INTO tasks (id, key, state, prompt, request, repo, ref, retries, requires, resume_session, birth_machine, birth_host, birth_folder, bundle, queue, group_id, arm, gates)
     VALUES ($1, $2, 'queued', $3, $4::text::json, $5, $6, $7, ${textArray("$8")}, $9, $10, $11, $12, $13, $14, $15, $16, ${textArray("$17")})
     ON CONFLICT (key) DO NOTHING RETURNING ${COLUMNS}`,
    [
      id,
      t.key,
      t.prompt,
      JSON.stringify(t.request),
      t.repo,
      t.ref,
      t.retries,
      JSON.stringify(t.requires),
      r?.session ?? null,
      r?.machineId ?? null,
      r?.hostname ?? null,
      r?.folder ?? null,
      t.bundle,
      t.queue,
      group?.id ?? null,
      group?.arm ?? null,
      JSON.stringify(t.gates ?? []),
    ],
  ];
}

/** The largest patch or stream a task stores, before compression. */
export const STORED_MAX_BYTES = 16 * 1024 * 1024;

export interface NewTask {
  prompt: string;
  request: TaskRequest;
  repo: string;
  ref: string | null;
  key: string | null;
  retries: number;
  requires: string[];
  /** The queue it goes in (its budget applies). */
  queue: string;
  /** A git bundle holding the code (then `repo` only describes it). */
  bundle: Uint8Array | null;
  /** A resume: the session, its birth host and folder. */
  resume: { session: string; machineId: string; hostname: string | null; folder: string } | null;
  /** An arm's gates (`--gate`); none for a plain task. */
  gates?: string[];
}

/** The run flags a task was submitted with, flag-shaped (never environment values). */
export type TaskRequest = Record<string, string | number | boolean>;

export interface Task {
  id: string;
  key: string | null;
  state: TaskState;
  prompt: string;
  request: TaskRequest;
  repo: string;
  ref: string | null;
  /** The fencing token: the number of the latest claim. */
  attempt: number;
  /** How many attempts started an agent. */
  runs: number;
  retries: number;
  created_at: string;
  worker: string | null;
  lease_expires_at: string | null;
  agent_started: boolean;
  verdict: unknown;
  exit_code: number | null;
  finished_at: string | null;
  /** Labels a worker must have to claim it. */
  requires: string[];
  cancel_requested: boolean;
  /** A resume: the session it continues, on its birth host (machine id, hostname) and in its birth folder. */
  resume_session: string | null;
  birth_machine: string | null;
  birth_host: string | null;
  birth_folder: string | null;
  /** The size of the git bundle stored with the task (--bundle, --here), or null: its code is `repo`. */
  bundle_bytes: number | null;
  /** The commit its latest attempt checked out (HEAD of the workspace when the agent started). */
  commit: string | null;
  /** The queue it is in (its budget applies): `default` unless submitted with --queue. */
  queue: string;
  /** The size of the workspace's patch after the run (tracked and untracked, not ignored files, against `commit`); 0: no change; null: none taken. */
  patch_bytes: number | null;
  /** Whether the patch is stored (gzip, up to PATCH_MAX_BYTES); a larger one is only measured. */
  patch_stored: boolean;
  /** The size of the run's redacted stream (its run folder's stream.jsonl); null: none found. */
  stream_bytes: number | null;
  /** Whether the stream is stored (gzip, up to STORED_MAX_BYTES). */
  stream_stored: boolean;
  /** The latest attempt's cost so far in micro-USD, as its run's progress told it (renewed with the lease); null: none told. */
  spent_micro_usd: number | null;
  /** When its latest attempt's agent started (its arm's time runs from here to finished_at). */
  started_at: string | null;
  /** An arm of a best-of-N group (`submit --arms`): the group's id and its 1-based arm number; null otherwise. */
  group_id: string | null;
  arm: number | null;
  /** Shell commands the worker runs in the workspace after the run (`--gate`), in order until one fails. */
  gates: string[];
  /** What each gate that ran did (null: none ran). */
  gate_results: GateResult[] | null;
}

/** One gate's run as a task stores it: its exit code (null: timed out, interrupted, or it could not start) and the redacted tail of its output. */
export interface GateResult {
  command: string;
  exit_code: number | null;
  /** Up to GATE_TAIL_CHARS of the end of its output (stdout and stderr), redacted. */
  tail: string;
}

/** The most of a gate's output a task stores. */
export const GATE_TAIL_CHARS = 2_000;

export type Row = Omit<Task, "request" | "verdict" | "requires" | "gates" | "gate_results"> & {
  request: string;
  verdict: string | null;
  requires: string;
  gates: string;
  gate_results: string | null;
};
export const taskOf = (row: Row): Task => ({
  ...row,
  request: JSON.parse(row.request) as TaskRequest,
  verdict: row.verdict === null ? null : JSON.parse(row.verdict),
  requires: JSON.parse(row.requires) as string[],
  gates: JSON.parse(row.gates) as string[],
  gate_results: row.gate_results === null ? null : (JSON.parse(row.gate_results) as GateResult[]),
});
