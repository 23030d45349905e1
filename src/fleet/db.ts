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

export const COLUMNS = `id, key, state, prompt, request::text AS request, repo, ref, attempt, runs, retries, ${iso("created_at")}, worker, ${iso("lease_expires_at")}, agent_started, verdict::text AS verdict, exit_code, ${iso("finished_at")}, ${jsonArray("requires")}, cancel_requested, resume_session, birth_machine, birth_host, birth_folder, octet_length(bundle) AS bundle_bytes, commit, queue, patch_bytes, patch IS NOT NULL AS patch_stored, stream_bytes, stream IS NOT NULL AS stream_stored, spent_micro_usd::float8 AS spent_micro_usd`;

/** The largest patch or stream a task stores, before compression. */
export const STORED_MAX_BYTES = 16 * 1024 * 1024;

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
}

export type Row = Omit<Task, "request" | "verdict" | "requires"> & { request: string; verdict: string | null; requires: string };
export const taskOf = (row: Row): Task => ({
  ...row,
  request: JSON.parse(row.request) as TaskRequest,
  verdict: row.verdict === null ? null : JSON.parse(row.verdict),
  requires: JSON.parse(row.requires) as string[],
});
