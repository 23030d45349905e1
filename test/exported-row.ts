// A session as `agentport export` writes it (the flat token spelling an older
// export has, which still imports): the tests that plant a row in a ledger by
// `import` start from these and change only the fields they attack.
export function exportedPhase(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    seq: 1,
    run_id: null,
    name: null,
    kind: "run",
    started_at: "2026-11-30T10:00:01.000Z",
    ended_at: "2026-11-30T10:00:02.000Z",
    status: "completed",
    ok: true,
    tokens_in: 1,
    tokens_out: 1,
    tokens_cache_read: 0,
    tokens_cache_write: 0,
    cost_micro_usd: 1,
    seconds: 1,
    stop_reason: null,
    failure: null,
    details: null,
    ...over,
  };
}

export function exportedSession(over: Record<string, unknown> & { id: string; cwd: string; phases: Record<string, unknown>[] }) {
  const { id, cwd, ...rest } = over;
  // In export's own order (id, agent, cwd first): an importer names the first field it refuses.
  return {
    id,
    agent: "claude",
    cwd,
    model: null,
    agent_session_id: null,
    session_file: null,
    session_dir: null,
    parent_id: null,
    phase: null,
    run_id: null,
    profile: null,
    declared_at: "2026-11-30T10:00:00.000Z",
    ...rest,
  };
}
