// One phase of a session, the same for every agent: declare in the ledger
// (committed before the agent starts); start → wait → kill in every case (the
// driver); the one decision (core/judge.ts) from what the agent's adapter
// gathered and what the driver saw; record.
import { AgentportError } from "../core/errors.ts";
import { failure } from "../core/failure.ts";
import { judge, type Decided, type JudgeInput } from "../core/judge.ts";
import type { Reducer } from "../core/reduction.ts";
import type { Supervisor, SupervisorOptions } from "../core/supervisor.ts";
import type { ProgressSink } from "../core/progress.ts";
import type { ThinkingLevel } from "../core/translate.ts";
import { exitCodeFor, type Verdict } from "../core/verdict.ts";
import { secrets } from "../core/redact.ts";
import { clean } from "../core/text.ts";
import type { Env } from "../core/env.ts";
import { drive, SpawnError, type DriveRequest, type DriveResult } from "../io/spawn.ts";
import { endedUncounted, type DeclareInput, type FinishPhaseInput, type Ledger } from "../io/ledger.ts";
import { reserveFinish } from "../io/unrecorded.ts";
import { agentGroupOf } from "../io/proc-identity.ts";
import { join } from "node:path";
import type { AgentExtras } from "./extras.ts";
import { homeOfRunDir } from "../io/paths.ts";
import { agentKeeper } from "../io/keeper.ts";
import { DEADLINE_ENV, deadlineStamp } from "../core/deadline.ts";
import { baseline, observe } from "../io/evidence.ts";
import { agentSandbox } from "../io/sandbox.ts";
import { closeRecordFile } from "../io/append-file.ts";
import { RUN_FILES, recordingStream, writeArgv, writeVerdict, type RunAbout } from "../io/run-folder.ts";

/** A session as a phase declares it: the ledger's declaration with its id fixed and its request as an object (resume reuses it). */
export type SessionDeclaration = Omit<DeclareInput, "id" | "request" | "env"> & { id: string; request?: Record<string, unknown> | null };

/** The adapter's part of the judge's input; the phase adds the process outcome, the session and the supervisor's facts. */
export type PhaseEvidence = Pick<JudgeInput, "reduction" | "envelope" | "requirement">;

export interface PhaseSpec {
  /** Declared before the spawn when new; an existing session only gets a new phase. */
  session: SessionDeclaration & { isNew: boolean };
  kind: string;
  argv: string[];
  cwd: string;
  env: Env;
  stdin: string | null;
  /** The phase's own folder (makeRunDir): what it leaves there is run-folder.ts's. */
  runDir: string;
  /** The agent's version and the model route, for argv.json. */
  about?: Omit<RunAbout, "agent">;
  /** Keep the agent's stdout in stream.jsonl (default true). */
  keepStream?: boolean;
  /** Keep the prompt in prompt.txt (default: only its sha256 and size in argv.json). */
  keepPrompt?: boolean;
  reducer: Reducer;
  settled?: () => boolean;
  /** After the process is gone: what the adapter gives the judge (the reduction, the envelope, an unmet requirement). */
  evidence: (result: DriveResult) => PhaseEvidence;
  /** A completed run with refused requests fails (--fail-on-refusal). */
  failOnRefusal?: boolean;
  /** Told the exact argv before it runs (--verbose shows it). */
  onArgv?: (argv: readonly string[]) => void;
  supervisor: Supervisor;
  /** What runs the agent (default: the process driver, spawn.ts; opencode's serve mode brings its own). */
  driver?: (request: DriveRequest) => Promise<DriveResult>;
  onWarning?: (text: string) => void;
  maxLineBytes: number;
  lingerMs?: number;
  graceMs?: number;
  signal?: AbortSignal;
}

/** What a one-shot run of any agent is asked: the adapters' requests extend it. */
export interface RunRequest {
  bin: string;
  prompt: string;
  /** Absolute birth folder. */
  cwd: string;
  /** The state folder (ledger, runs). */
  home: string;
  /** In the roster's words; each adapter translates (translate.ts). */
  model?: string;
  tools?: string[];
  thinking?: ThinkingLevel;
  /** Follow-up prompts asking for a missing envelope (default 0). */
  nudges?: number;
  /** Permission settings, limits, system-prompt additions, pass-through arguments. */
  extras?: AgentExtras;
  /** The id a new session is declared with (Turn.sessionId); default a fresh UUID. */
  newSessionId?: string;
  /** The request a new session is born with, stored with it (resume reuses it). */
  request?: Record<string, unknown>;
  /** Told the exact argv of each phase before it runs. */
  onArgv?: (argv: readonly string[]) => void;
  /** Timeout, stall, budget and loop detection (per turn: every nudge gets its own clocks). */
  supervision: SupervisorOptions;
  onWarning?: (text: string) => void;
  graceMs?: number;
  maxLineBytes: number;
  env: Env;
  profile?: string[];
  /** The user's text for the agent's appended system prompt; agentport's envelope instructions follow it. */
  appendSystemPrompt?: string;
  progress?: ProgressSink;
  signal?: AbortSignal;
  /** stream.jsonl in each phase's run folder (default true: --keep-stream off). */
  keepStream?: boolean;
  /** The prompt in prompt.txt (--keep-prompt). */
  keepPrompt?: boolean;
}

/** What every agent's session is declared with from its request: the birth folder, the model asked for, the profile, the birth request. */
export function declaredFrom(request: RunRequest): Pick<SessionDeclaration, "cwd" | "model" | "profile" | "request"> {
  return { cwd: request.cwd, model: request.model ?? null, profile: request.profile?.join(",") ?? null, request: request.request ?? null };
}

export interface RunOutcome {
  verdict: Verdict;
  exitCode: number;
  runDir: string;
}

/** A session's title: the first line of its first prompt, redacted, then cut to 80 characters. */
function titleOf(prompt: string | null): string | null {
  const line = prompt?.split("\n", 50).find((l) => l.trim() !== "");
  return line === undefined ? null : clean(secrets.diagnostic(line.slice(0, 2000)), 80) || null;
}

export async function runPhase(ledger: Ledger, spec: PhaseSpec): Promise<RunOutcome> {
  const { session } = spec;
  // The keeper starts now, beside the ledger's work, not on the agent's start (a second core is busy with it instead).
  agentKeeper();
  if (session.isNew) {
    await ledger.declareSession({
      id: session.id,
      agent: session.agent,
      cwd: session.cwd,
      model: session.model ?? null,
      agentSessionId: session.agentSessionId === undefined ? session.id : session.agentSessionId,
      sessionFile: session.sessionFile ?? null,
      sessionDir: session.sessionDir ?? null,
      parentId: session.parentId ?? null,
      profile: session.profile ?? null,
      request: session.request ? JSON.stringify(session.request) : null,
      title: titleOf(spec.stdin),
    });
  }
  const phase = await ledger.startPhase({
    sessionId: session.id,
    kind: spec.kind,
    runId: process.env.AGENTPORT_RUN_ID,
    name: process.env.AGENTPORT_PHASE,
    runDir: spec.runDir,
  });
  writeArgv(
    spec.runDir,
    spec.argv,
    { agent: session.agent, ...spec.about, request: session.request ?? null },
    spec.stdin,
    spec.keepPrompt ?? false,
  );
  const recorder = spec.keepStream === false ? null : recordingStream(spec.runDir, spec.reducer, spec.keepPrompt ? null : spec.stdin);
  const reducer = recorder ?? spec.reducer;
  // Room for the finish, taken while there is room (a disk may fill during the run).
  const reservation = reserveFinish(homeOfRunDir(spec.runDir), phase);
  // The folder as the run found it, before the agent can touch it.
  const base = await baseline(spec.cwd);
  const started = performance.now();
  spec.onArgv?.(spec.argv);
  let decided: Decided;
  // Where the agent's group is, for whoever looks (cancel, follow, resume): written as it starts.
  let agentRecorded: Promise<void> = Promise.resolve();
  try {
    const result = await (spec.driver ?? drive)({
      argv: spec.argv,
      cwd: spec.cwd,
      env: withDeadline(spec.env, spec.supervisor.timeoutMs),
      stdin: spec.stdin,
      stderrFile: join(spec.runDir, RUN_FILES.stderr),
      reducer,
      maxLineBytes: spec.maxLineBytes,
      supervisor: spec.supervisor,
      onWarning: spec.onWarning,
      lingerMs: spec.lingerMs,
      graceMs: spec.graceMs,
      settled: spec.settled,
      signal: spec.signal,
      onSpawn: (pid) => {
        agentRecorded = ledger.setPhaseAgent(phase.id, agentGroupOf(pid)).catch(() => {});
      },
    });
    await agentRecorded;
    const work = { expect: spec.supervisor.expect, observed: await observe(base, spec.supervisor.expect) };
    // Only when something was reaped: a replay of the stream (which cannot know) gives the same verdict back otherwise.
    const facts = result.reaped ? { ...spec.supervisor.facts(), reaped: result.reaped } : spec.supervisor.facts();
    decided = judge({
      agent: session.agent,
      sessionId: session.id,
      proc: result,
      facts,
      failOnRefusal: spec.failOnRefusal,
      work,
      endedAtMs: Date.now(),
      agentVersion: spec.about?.agentVersion ?? null,
      ...spec.evidence(result),
    });
  } catch (error) {
    recorder?.close();
    if (!(error instanceof SpawnError)) {
      await ledger.finishPhase(
        phase.id,
        endedUncounted("failed", secrets.diagnostic(`internal error: ${(error as Error).message}`), (performance.now() - started) / 1000),
      );
      reservation?.release();
      throw error;
    }
    // The agent never started: nothing was spent, and the environment is at fault.
    decided = judge({
      agent: session.agent,
      sessionId: session.id,
      reduction: { ...spec.reducer.reduction(), failure: failure("environment", error.message) },
      proc: { exitCode: null, signal: null, stoppedBy: null, stderrTail: "", spawnError: error.code },
    });
  }
  recorder?.close();
  closeRecordFile(join(spec.runDir, RUN_FILES.progress)); // the verdict's record, when it comes, opens it again
  // What the ledger keeps and the caller prints: through the redactor first (a new verdict, not a patch).
  const verdict = { ...secrets.verdict(decided.verdict), isolated: agentSandbox() !== null };
  const details: Record<string, string | number | boolean> = { ...spec.supervisor.facts() };
  if (verdict.failure !== null) details.failure_kind = verdict.failure.kind;
  if (decided.fault !== null) {
    details.fault_kind = decided.fault.kind;
    details.fault_evidence = decided.fault.evidence;
  }
  const finish: FinishPhaseInput = {
    status: verdict.status,
    ok: verdict.ok,
    tokens: verdict.tokens,
    costMicroUsd: verdict.cost_micro_usd,
    seconds: (performance.now() - started) / 1000,
    stopReason: verdict.stop_reason,
    failure: verdict.failure?.message ?? null,
    details: Object.keys(details).length > 0 ? details : null,
    observedModel: typeof verdict.summary.model === "string" ? verdict.summary.model : null,
    resumeAfter: verdict.resume_after,
    costSource: verdict.cost_source,
    agentVersion: verdict.agent_version,
    changes: verdict.changes,
    reaped: typeof verdict.summary.reaped === "number" ? verdict.summary.reaped : null,
  };
  const outcome = { verdict, exitCode: exitCodeFor(verdict), runDir: spec.runDir };
  writeVerdict(spec.runDir, verdict);
  try {
    await ledger.finishPhase(phase.id, finish);
  } catch (error) {
    const kept = reservation?.keep(finish) ?? false;
    throw new UnrecordedVerdict(outcome, (error as Error).message, kept);
  }
  reservation?.release();
  return outcome;
}

/** The run has its verdict but the ledger would not take it (a full disk): the caller still prints it, then fails with this one line (exit 5). */
export class UnrecordedVerdict extends AgentportError {
  constructor(
    readonly outcome: RunOutcome,
    why: string,
    kept: boolean,
  ) {
    super(
      "unrecorded_verdict",
      `the ledger could not record the finish of session ${outcome.verdict.session_id} (${why}): ${kept ? "it was kept aside, and the next agentport that can write the ledger records it" : "the next agentport that can write the ledger finishes the phase as interrupted"}`,
    );
    // The caller prints the verdict before it fails with this.
    this.printed = true;
  }
}

/** The agent's environment with its deadline in it, when it has one (--timeout). */
function withDeadline(env: Env, timeoutMs: number | undefined): Env {
  return timeoutMs === undefined ? env : { ...env, [DEADLINE_ENV]: deadlineStamp(Date.now(), timeoutMs) };
}
