// A Claude Code phase: a new session with the id chosen here, or a resume.
import { ClaudeReducer } from "../core/claude/reducer.ts";
import { decide } from "../core/outcome.ts";
import { compileSchema, envelopeFromVerdict, type JsonSchema } from "../core/envelope.ts";
import type { ProgressSink } from "../core/progress.ts";
import { Supervisor, type SupervisorOptions } from "../core/supervisor.ts";
import type { Env } from "../core/env.ts";
import type { Ledger } from "../io/ledger.ts";
import { makeRunDir } from "../io/paths.ts";
import { claudeArgv } from "./claude.ts";
import { runPhase, type RunOutcome } from "./phase.ts";

export interface ClaudeRunRequest {
  bin: string;
  prompt: string;
  cwd: string;
  home: string;
  /** Continue this session (already in the ledger) instead of starting one. */
  resumeId?: string;
  model?: string;
  tools?: string[];
  /** The envelope's JSON Schema when one is expected: a fenced json block in the final text. */
  schema?: JsonSchema | null;
  /** Timeout, stall, budget and loop detection. */
  supervision: SupervisorOptions;
  onWarning?: (text: string) => void;
  lingerMs?: number;
  graceMs?: number;
  maxLineBytes: number;
  env: Env;
  profile?: string[];
  progress?: ProgressSink;
  signal?: AbortSignal;
}

export function runClaude(ledger: Ledger, request: ClaudeRunRequest): Promise<RunOutcome> {
  const sessionId = request.resumeId ?? crypto.randomUUID();
  const supervisor = new Supervisor(request.supervision);
  const reducer = new ClaudeReducer({ cwd: request.cwd, emit: request.progress, loop: supervisor.loop });
  return runPhase(ledger, {
    session: {
      id: sessionId,
      agent: "claude",
      cwd: request.cwd,
      model: request.model ?? null,
      profile: request.profile?.join(",") ?? null,
      isNew: request.resumeId === undefined,
    },
    kind: request.resumeId === undefined ? "run" : "resume",
    argv: claudeArgv({ bin: request.bin, sessionId, model: request.model, tools: request.tools, resume: request.resumeId !== undefined }),
    cwd: request.cwd,
    env: request.env,
    stdin: request.prompt,
    runDir: makeRunDir(request.home, sessionId),
    reducer,
    settled: () => reducer.settled(),
    judge: (result) => {
      const decided = decide("claude", reducer.reduction(), result);
      const compiled = request.schema ? compileSchema(request.schema) : null;
      if (compiled?.ok) decided.verdict = envelopeFromVerdict(decided.verdict, compiled.check);
      return decided;
    },
    maxLineBytes: request.maxLineBytes,
    supervisor,
    onWarning: request.onWarning,
    lingerMs: request.lingerMs,
    graceMs: request.graceMs,
    signal: request.signal,
  });
}
