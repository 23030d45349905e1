// One phase of a session, the same for every agent: declare in the ledger
// (committed before the agent starts), drive the process, judge, record.
import type { Decided } from "../core/outcome.ts";
import type { ProgressSink } from "../core/progress.ts";
import type { Reducer } from "../core/reduction.ts";
import { exitCodeFor, type Verdict } from "../core/verdict.ts";
import type { Env } from "../core/env.ts";
import { drive, SpawnError, type DriveResult } from "../io/spawn.ts";
import type { Ledger } from "../io/ledger.ts";
import { join } from "node:path";

export interface SessionDeclaration {
  id: string;
  agent: Verdict["agent"];
  /** Absolute birth folder. */
  cwd: string;
  model?: string | null;
  sessionFile?: string | null;
  sessionDir?: string | null;
  parentId?: string | null;
  profile?: string | null;
}

export interface PhaseSpec {
  /** Declared before the spawn when new; an existing session only gets a new phase. */
  session: SessionDeclaration & { isNew: boolean };
  kind: string;
  argv: string[];
  cwd: string;
  env: Env;
  stdin: string | null;
  runDir: string;
  reducer: Reducer;
  settled?: () => boolean;
  judge: (result: DriveResult) => Decided;
  maxLineBytes: number;
  timeoutMs?: number;
  lingerMs?: number;
  graceMs?: number;
  signal?: AbortSignal;
  progress?: ProgressSink;
}

export interface RunOutcome {
  verdict: Verdict;
  exitCode: number;
  runDir: string;
  environmentFault: string | null;
}

function spawnFailure(agent: Verdict["agent"], sessionId: string, error: SpawnError): RunOutcome & { verdict: Verdict } {
  const verdict: Verdict = {
    agent, session_id: sessionId, status: "failed", ok: false, text: null, envelope: null,
    failure: error.message, stop_reason: null, cost_micro_usd: null, tokens: null, refused: [], summary: {},
  };
  return { verdict, exitCode: exitCodeFor(verdict, true), runDir: "", environmentFault: error.code };
}

export async function runPhase(ledger: Ledger, spec: PhaseSpec): Promise<RunOutcome> {
  const { session } = spec;
  if (session.isNew) {
    ledger.declareSession({
      id: session.id,
      agent: session.agent,
      cwd: session.cwd,
      model: session.model ?? null,
      agentSessionId: session.id,
      sessionFile: session.sessionFile ?? null,
      sessionDir: session.sessionDir ?? null,
      parentId: session.parentId ?? null,
      profile: session.profile ?? null,
    });
  }
  const phase = ledger.startPhase({ sessionId: session.id, kind: spec.kind, runId: process.env.AGENTPORT_RUN_ID, name: process.env.AGENTPORT_PHASE });
  const started = performance.now();
  let outcome: RunOutcome;
  try {
    const result = await drive({
      argv: spec.argv,
      cwd: spec.cwd,
      env: spec.env,
      stdin: spec.stdin,
      stderrFile: join(spec.runDir, "stderr.log"),
      reducer: spec.reducer,
      maxLineBytes: spec.maxLineBytes,
      timeoutMs: spec.timeoutMs,
      lingerMs: spec.lingerMs,
      graceMs: spec.graceMs,
      settled: spec.settled,
      signal: spec.signal,
    });
    const { verdict, environmentFault } = spec.judge(result);
    verdict.session_id ??= session.id;
    outcome = { verdict, exitCode: exitCodeFor(verdict, environmentFault !== null), runDir: spec.runDir, environmentFault };
  } catch (error) {
    if (!(error instanceof SpawnError)) {
      ledger.finishPhase(phase.id, { status: "failed", ok: false, tokens: null, costMicroUsd: null, seconds: (performance.now() - started) / 1000, stopReason: null, failure: `internal error: ${(error as Error).message}` });
      throw error;
    }
    outcome = { ...spawnFailure(session.agent, session.id, error), runDir: spec.runDir };
  }
  const v = outcome.verdict;
  ledger.finishPhase(phase.id, {
    status: v.status,
    ok: v.ok,
    tokens: v.tokens,
    costMicroUsd: v.cost_micro_usd,
    seconds: (performance.now() - started) / 1000,
    stopReason: v.stop_reason,
    failure: v.failure,
  });
  return outcome;
}
