// The ledger's schema, as an ordered list of forward migrations, each in the
// dialect of every engine. Migration i (0-based) takes a ledger from version i
// to i + 1 (SQLite: PRAGMA user_version; PostgreSQL: the schema_version
// table). Never edit a migration that has shipped: append a new one, with
// addColumns or createTable when it is one of those, so both engines get it.
//
// SQLite tables are STRICT so a float where an integer belongs (tokens,
// micro-dollars) fails loudly instead of being stored as whatever SQLite's
// affinity makes of it. PostgreSQL integers are 64-bit, and sessions carry a
// `rowid` there too (the insertion order SQLite keeps for free).

export interface Migration {
  sqlite: string;
  postgres: string;
}

/** A column's type: the same values on both engines. */
export type ColumnType = "text" | "integer" | "real";

const TYPES: Record<ColumnType, Migration> = {
  text: { sqlite: "TEXT", postgres: "TEXT" },
  integer: { sqlite: "INTEGER", postgres: "BIGINT" },
  real: { sqlite: "REAL", postgres: "DOUBLE PRECISION" },
};

/** A column: its type, then constraints in SQL both engines read (NOT NULL, DEFAULT 'x', REFERENCES t(c)). */
export type Column = ColumnType | `${ColumnType} ${string}`;

function columnSql(name: string, column: Column, engine: keyof Migration): string {
  const [type, ...rest] = column.split(" ");
  return [name, TYPES[type as ColumnType][engine], ...rest].join(" ");
}

/** New columns on an existing table (nullable, or with a DEFAULT). */
export function addColumns(table: string, columns: Record<string, Column>): Migration {
  const render = (engine: keyof Migration): string =>
    Object.entries(columns)
      .map(([name, column]) => `ALTER TABLE ${table} ADD COLUMN ${columnSql(name, column, engine)};`)
      .join("\n");
  return { sqlite: render("sqlite"), postgres: render("postgres") };
}

/** A new table; `keys` are table constraints (PRIMARY KEY (a, b), UNIQUE (c)), `indexes` name => columns. */
export function createTable(
  table: string,
  columns: Record<string, Column>,
  keys: string[] = [],
  indexes: Record<string, string> = {},
): Migration {
  const render = (engine: keyof Migration, suffix: string): string => {
    const body = [...Object.entries(columns).map(([name, column]) => columnSql(name, column, engine)), ...keys].join(",\n  ");
    const made = Object.entries(indexes).map(([name, on]) => `CREATE INDEX ${name} ON ${table}(${on});`);
    return [`CREATE TABLE ${table} (\n  ${body}\n)${suffix};`, ...made].join("\n");
  };
  return { sqlite: render("sqlite", " STRICT"), postgres: render("postgres", "") };
}

export const MIGRATIONS: readonly Migration[] = [
  // 1: sessions, runs, phases, probes.
  {
    sqlite: `
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
    postgres: `
  CREATE TABLE sessions (
    id               TEXT PRIMARY KEY,
    agent            TEXT NOT NULL,
    cwd              TEXT NOT NULL,
    model            TEXT,
    agent_session_id TEXT,
    session_file     TEXT,
    session_dir      TEXT,
    parent_id        TEXT,
    phase            TEXT,
    run_id           TEXT,
    profile          TEXT,
    declared_at      TEXT NOT NULL,
    rowid            BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE
  );
  CREATE INDEX sessions_by_declared_at ON sessions(declared_at);
  CREATE INDEX sessions_by_cwd ON sessions(cwd, declared_at);
  CREATE INDEX sessions_by_agent_session_id ON sessions(agent_session_id);

  CREATE TABLE runs (
    id             TEXT PRIMARY KEY,
    kind           TEXT,
    started_at     TEXT,
    ended_at       TEXT,
    status         TEXT,
    tokens_in      BIGINT,
    tokens_out     BIGINT,
    cost_micro_usd BIGINT,
    seconds        DOUBLE PRECISION
  );

  CREATE TABLE phases (
    id                 BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    session_id         TEXT NOT NULL REFERENCES sessions(id),
    seq                BIGINT NOT NULL,
    run_id             TEXT,
    name               TEXT,
    kind               TEXT,
    started_at         TEXT NOT NULL,
    ended_at           TEXT,
    status             TEXT,
    ok                 BIGINT,
    tokens_in          BIGINT,
    tokens_out         BIGINT,
    tokens_cache_read  BIGINT,
    tokens_cache_write BIGINT,
    cost_micro_usd     BIGINT,
    seconds            DOUBLE PRECISION,
    stop_reason        TEXT,
    failure            TEXT,
    UNIQUE (session_id, seq)
  );
  CREATE INDEX phases_by_run_id ON phases(run_id);

  CREATE TABLE probes (
    path      TEXT NOT NULL,
    size      BIGINT NOT NULL,
    mtime_ms  BIGINT NOT NULL,
    data      TEXT NOT NULL,
    probed_at TEXT NOT NULL,
    PRIMARY KEY (path, size, mtime_ms)
  );
  `,
  },
  // 2: what supervision and the fault classifier found, as flat JSON
  // (expired clock, weighted budget figure, loop, fault kind and evidence).
  addColumns("phases", { details: "text" }),
  // 3: the birth host: its hostname, and its machine id (what a resume elsewhere is refused on).
  addColumns("sessions", { host: "text", machine_id: "text" }),
  // 4: project configs trusted with `agentport trust`, as it once recorded them; trust now lives in the home (io/trust-store.ts), never in a ledger, and this table is not read.
  createTable("trusted_configs", { path: "text NOT NULL", sha256: "text NOT NULL", trusted_at: "text NOT NULL" }, ["PRIMARY KEY (path)"]),
  // 5: who runs each phase (agentport's pid, start time, host) and the agent's
  // process group, so a later command can finish the phases of a runner that
  // is gone; the open phases indexed, since every command looks at them.
  withIndex(
    addColumns("phases", { runner_pid: "integer", runner_start: "text", runner_host: "text", agent_pgid: "integer" }),
    "CREATE INDEX phases_open ON phases(id) WHERE ended_at IS NULL;",
  ),
  // 6: each phase's own run folder (verdict.json, stream.jsonl, progress.ndjson, argv.json, stderr.log): what show, follow, replay and prune find.
  addColumns("phases", { run_dir: "text" }),
  // 7: the request a session was born with (JSON: model, route, gateway, tools,
  // thinking, profile, envelope, permission settings, limits, pass-through): resume reuses it.
  addColumns("sessions", { request: "text" }),
  // 8: the model that really ran each phase (claude's system/init, pi's assistant messages).
  addColumns("phases", { observed_model: "text" }),
  // 9: the start time of the agent's group leader (boot:start, as the runner's), so a
  // later pid of that number is never taken for the agent (cancel would kill it, resume refuse).
  addColumns("phases", { agent_start: "text" }),
  // 10: when a session came in by `import` (null: born in this ledger); resume does not take an imported request unless told to.
  addColumns("sessions", { imported_at: "text" }),
  // 11: a title for people: the first line of the first prompt, redacted and cut (sessions lists it).
  addColumns("sessions", { title: "text" }),
  // 12: a parked phase's reset time (RFC 3339: what `resume --when-ready` waits for), where its cost came from, and the agent's version.
  addColumns("phases", { resume_after: "text", cost_source: "text", agent_version: "text" }),
  // 13: what a phase changed in its folder (JSON {files, insertions, deletions}; null outside git) and how many stray descendants were ended with it.
  addColumns("phases", { changes: "text", reaped: "integer" }),
];

/** A migration with one more statement both engines read as written (an index). */
function withIndex(migration: Migration, sql: string): Migration {
  return { sqlite: `${migration.sqlite}\n${sql}`, postgres: `${migration.postgres}\n${sql}` };
}

/** The version a fully migrated ledger carries. */
export const SCHEMA_VERSION = MIGRATIONS.length;
