// A Claude Code phase: a new session with the id chosen here, or a resume;
// with nudges, a turn that ended without its envelope is followed by short
// resumes of the same session asking only for it (phases of kind "nudge").
import { ClaudeReducer } from "../core/claude/reducer.ts";
import { decide } from "../core/outcome.ts";
import { compileSchema, envelopeFromVerdict, type JsonSchema } from "../core/envelope.ts";
import { Supervisor } from "../core/supervisor.ts";
import { translate } from "../core/translate.ts";
import type { Ledger } from "../io/ledger.ts";
import { makeRunDir } from "../io/paths.ts";
import { claudeArgv } from "./claude.ts";
import { nudgeFailure, nudgePrompt, withNudges, type Turn, type TurnOutcome } from "./nudge.ts";
import { runPhase, type RunOutcome, type RunRequest } from "./phase.ts";

export interface ClaudeRunRequest extends RunRequest {
  /** Continue this session (already in the ledger) instead of starting one. */
  resumeId?: string;
  /** The envelope's JSON Schema when one is expected: a fenced json block in the final text. */
  schema?: JsonSchema | null;
  lingerMs?: number;
}

export function runClaude(ledger: Ledger, request: ClaudeRunRequest): Promise<RunOutcome> {
  const sessionId = request.resumeId ?? crypto.randomUUID();
  const words = translate("claude", { model: request.model, tools: request.tools, thinking: request.thinking });
  const nudges = request.nudges ?? 0;
  const compiled = request.schema ? compileSchema(request.schema) : null;
  let problem = "";

  const turn = async ({ nudge, last }: Turn): Promise<TurnOutcome> => {
    const first = nudge === 0;
    const resume = !first || request.resumeId !== undefined;
    if (!first) request.onWarning?.(`claude: the turn ended without its envelope (${problem}); nudge ${nudge} of ${nudges}`);
    const supervisor = new Supervisor(request.supervision);
    const reducer = new ClaudeReducer({ cwd: request.cwd, emit: request.progress, loop: supervisor.loop });
    const seen: { missing: string | null } = { missing: null };
    const outcome = await runPhase(ledger, {
      session: {
        id: sessionId,
        agent: "claude",
        cwd: request.cwd,
        model: request.model ?? null,
        profile: request.profile?.join(",") ?? null,
        request: request.request ?? null,
        isNew: first && request.resumeId === undefined,
      },
      kind: first ? (request.resumeId === undefined ? "run" : "resume") : "nudge",
      argv: claudeArgv({ ...request.extras, bin: request.bin, sessionId, model: words.model, tools: words.tools, resume }),
      failOnRefusal: request.extras?.failOnRefusal,
      onArgv: request.onArgv,
      cwd: request.cwd,
      env: { ...request.env, ...words.env },
      stdin: first ? request.prompt : nudgePrompt({ schema: request.schema }, problem),
      runDir: makeRunDir(request.home, sessionId),
      reducer,
      settled: () => reducer.settled(),
      judge: (result) => {
        const decided = decide("claude", reducer.reduction(), result);
        if (compiled?.ok) {
          const completed = decided.verdict.ok;
          decided.verdict = envelopeFromVerdict(decided.verdict, compiled.check);
          if (completed && !decided.verdict.ok && decided.verdict.failure !== null) {
            seen.missing = decided.verdict.failure;
            if (last && nudges > 0) decided.verdict.failure = nudgeFailure(nudges, seen.missing);
          }
        }
        return decided;
      },
      maxLineBytes: request.maxLineBytes,
      supervisor,
      onWarning: request.onWarning,
      lingerMs: request.lingerMs,
      graceMs: request.graceMs,
      signal: request.signal,
    });
    if (seen.missing !== null) problem = seen.missing;
    return { outcome, missing: seen.missing };
  };
  return withNudges(nudges, request.signal, turn);
}
