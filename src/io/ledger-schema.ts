// The ledger's schema, as an ordered list of forward migrations.
// Migration i (0-based) takes a file from user_version i to i + 1. Never edit
// a migration that has shipped: append a new one.
//
// Tables are STRICT so a float where an integer belongs (tokens, micro-dollars)
// fails loudly instead of being stored as whatever SQLite's affinity makes of it.

export const MIGRATIONS: readonly string[] = [
  // 1: sessions, runs, phases, probes.
  `
  CREATE TABLE sessions (
    id               TEXT PRIMARY KEY,  -- agentport's id: a uuid chosen before spawn
    agent            TEXT NOT NULL,     -- 'pi' | 'claude'
    cwd              TEXT NOT NULL,     -- absolute birth folder
    model            TEXT,
    agent_session_id TEXT,              -- pi's or claude's own id, bound later (may equal id)
    session_file     TEXT,              -- pi: the session file path
    session_dir      TEXT,
    parent_id        TEXT,              -- clones
    phase            TEXT,              -- $AGENTPORT_PHASE at declaration
    run_id           TEXT,              -- $AGENTPORT_RUN_ID at declaration
    profile          TEXT,
    declared_at      TEXT NOT NULL      -- ISO 8601
  ) STRICT;
  CREATE INDEX sessions_by_declared_at ON sessions(declared_at);
  CREATE INDEX sessions_by_cwd ON sessions(cwd, declared_at);
  CREATE INDEX sessions_by_agent_session_id ON sessions(agent_session_id);

  CREATE TABLE runs (
    id             TEXT PRIMARY KEY,
    kind           TEXT,
    started_at     TEXT,
    ended_at       TEXT,
    status         TEXT,
    tokens_in      INTEGER,
    tokens_out     INTEGER,
    cost_micro_usd INTEGER,
    seconds        REAL
  ) STRICT;

  CREATE TABLE phases (
    id                 INTEGER PRIMARY KEY,
    session_id         TEXT NOT NULL REFERENCES sessions(id),
    seq                INTEGER NOT NULL,  -- 1.. per session
    run_id             TEXT,
    name               TEXT,
    kind               TEXT,              -- run | resume | nudge | clone | ...
    started_at         TEXT NOT NULL,
    ended_at           TEXT,              -- null until finished
    status             TEXT,              -- null until finished, else a Status
    ok                 INTEGER,
    tokens_in          INTEGER,
    tokens_out         INTEGER,
    tokens_cache_read  INTEGER,
    tokens_cache_write INTEGER,
    cost_micro_usd     INTEGER,
    seconds            REAL,
    stop_reason        TEXT,
    failure            TEXT,
    UNIQUE (session_id, seq)
  ) STRICT;
  CREATE INDEX phases_by_run_id ON phases(run_id);

  CREATE TABLE probes (
    path      TEXT NOT NULL,
    size      INTEGER NOT NULL,
    mtime_ms  INTEGER NOT NULL,
    data      TEXT NOT NULL,  -- JSON
    probed_at TEXT NOT NULL,
    PRIMARY KEY (path, size, mtime_ms)
  ) STRICT;
  `,
  // 2: what supervision and the fault classifier found, as flat JSON
  // (expired clock, weighted budget figure, loop, fault kind and evidence).
  `
  ALTER TABLE phases ADD COLUMN details TEXT;
  `,
];

/** The user_version a fully migrated ledger carries. */
export const SCHEMA_VERSION = MIGRATIONS.length;
