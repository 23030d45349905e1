// One agent run from request to verdict: spawn, frame, reduce, decide.
import { ClaudeReducer } from "../core/claude/reducer.ts";
import { decide } from "../core/outcome.ts";
import type { ProgressSink } from "../core/progress.ts";
import { exitCodeFor, type Verdict } from "../core/verdict.ts";
import { drive, SpawnError } from "../io/spawn.ts";
import { makeRunDir } from "../io/paths.ts";
import { join } from "node:path";
import { claudeArgv } from "./claude.ts";

export interface ClaudeRunRequest {
  bin: string;
  prompt: string;
  cwd: string;
  home: string;
  sessionId?: string;
  model?: string;
  tools?: string[];
  timeoutMs?: number;
  lingerMs?: number;
  graceMs?: number;
  maxLineBytes: number;
  env?: Record<string, string | undefined>;
  progress?: ProgressSink;
  signal?: AbortSignal;
}

export interface RunOutcome {
  verdict: Verdict;
  exitCode: number;
  runDir: string;
  environmentFault: string | null;
}

export async function runClaude(request: ClaudeRunRequest): Promise<RunOutcome> {
  const sessionId = request.sessionId ?? crypto.randomUUID();
  const runDir = makeRunDir(request.home, sessionId);
  const reducer = new ClaudeReducer({ cwd: request.cwd, emit: request.progress });
  try {
    const result = await drive({
      argv: claudeArgv({ bin: request.bin, sessionId, model: request.model, tools: request.tools }),
      cwd: request.cwd,
      env: request.env ?? process.env,
      stdin: request.prompt,
      stderrFile: join(runDir, "stderr.log"),
      reducer,
      maxLineBytes: request.maxLineBytes,
      timeoutMs: request.timeoutMs,
      lingerMs: request.lingerMs,
      graceMs: request.graceMs,
      settled: () => reducer.settled(),
      signal: request.signal,
    });
    const { verdict, environmentFault } = decide("claude", reducer.reduction(), result);
    verdict.session_id ??= sessionId;
    return { verdict, exitCode: exitCodeFor(verdict, environmentFault !== null), runDir, environmentFault };
  } catch (error) {
    if (error instanceof SpawnError) {
      const verdict: Verdict = {
        agent: "claude", session_id: sessionId, status: "failed", ok: false, text: null, envelope: null,
        failure: error.message, stop_reason: null, cost_micro_usd: null, tokens: null, refused: [], summary: {},
      };
      return { verdict, exitCode: exitCodeFor(verdict, true), runDir, environmentFault: error.code };
    }
    throw error;
  }
}
