// A Claude Code phase: a new session with the id chosen here, or a resume;
// with nudges, a turn that ended without its envelope is followed by short
// resumes of the same session asking only for it (phases of kind "nudge").
import { ClaudeReducer } from "../../core/claude/reducer.ts";
import { onOwnSession } from "../../core/reduction.ts";
import { compileSchema, envelopeFromText, type JsonSchema } from "../../core/envelope.ts";
import { appendedSystemPrompt, envelopeInstructions } from "../../core/instructions.ts";
import { Supervisor } from "../../core/supervisor.ts";
import { translate, type PermissionMode } from "../../core/translate.ts";
import type { Ledger } from "../../io/ledger.ts";
import { makeRunDir } from "../../io/paths.ts";
import { recordingProgress } from "../../io/run-folder.ts";
import { claudeArgv } from "./argv.ts";
import { nudgePrompt, withNudges, type Attempt } from "../nudge.ts";
import { declaredFrom, runPhase, type RunOutcome, type RunRequest } from "../phase.ts";

export interface ClaudeRunRequest extends RunRequest {
  /** Continue this session (already in the ledger) instead of starting one. */
  resumeId?: string;
  /** Start a new session from this one's history (claude's id; best-of-N's arms from the prime). */
  forkOf?: string;
  /** The envelope's JSON Schema when one is expected: a fenced json block in the final text. */
  schema?: JsonSchema | null;
  lingerMs?: number;
  permissionMode?: string;
}

/** What claude's --append-system-prompt carries: the user's text, then the envelope's instructions. */
export const claudeSystemPrompt = (user: string | undefined, schema: JsonSchema | null | undefined): string | undefined =>
  appendedSystemPrompt(user, schema ? envelopeInstructions(schema, { fenced: true }) : null);

export function runClaude(ledger: Ledger, request: ClaudeRunRequest): Promise<RunOutcome> {
  const sessionId = request.resumeId ?? request.newSessionId ?? crypto.randomUUID();
  const words = translate("claude", { model: request.model, tools: request.tools, thinking: request.thinking });
  const nudges = request.nudges ?? 0;
  const compiled = request.schema ? compileSchema(request.schema) : null;
  const check = compiled?.ok ? compiled.check : null;
  // The model is told about the envelope up front, not only when a nudge asks again.
  const appendSystemPrompt = claudeSystemPrompt(request.appendSystemPrompt, request.schema);

  let warnedSession = false;
  const turn = async ({ nudge, last, problem }: Attempt): Promise<RunOutcome> => {
    const first = problem === null;
    const resume = !first || request.resumeId !== undefined;
    if (problem !== null)
      request.onWarning?.(`claude: the turn ended without its envelope (${problem.message}); nudge ${nudge} of ${nudges}`);
    const supervisor = new Supervisor(request.supervision);
    const runDir = makeRunDir(request.home, sessionId);
    const emit = recordingProgress(runDir, { sessionId, agent: "claude" }, request.progress);
    const reducer = new ClaudeReducer({ cwd: request.cwd, emit, loop: supervisor.loop });
    return await runPhase(ledger, {
      session: {
        id: sessionId,
        agent: "claude",
        ...declaredFrom(request),
        isNew: first && request.resumeId === undefined,
      },
      kind: first ? (request.resumeId === undefined ? "run" : "resume") : "nudge",
      argv: claudeArgv({
        ...request.extras,
        bin: request.bin,
        sessionId,
        model: words.model,
        tools: words.tools,
        resume,
        forkOf: first ? request.forkOf : undefined,
        appendSystemPrompt,
        permissionMode: (request.permissionMode as PermissionMode | undefined) ?? request.extras?.permissionMode,
      }),
      failOnRefusal: request.extras?.failOnRefusal,
      onArgv: request.onArgv,
      cwd: request.cwd,
      env: { ...request.env, ...words.env },
      stdin: problem === null ? request.prompt : nudgePrompt({ schema: request.schema }, problem),
      runDir,
      about: { agentVersion: null, route: words.model ?? null },
      keepStream: request.keepStream,
      keepPrompt: request.keepPrompt,
      reducer,
      settled: () => reducer.settled(),
      evidence: () => {
        const reduction = onOwnSession(reducer.reduction(), sessionId);
        const theirs = reduction.summary.agent_session_id;
        if (typeof theirs === "string" && !warnedSession) {
          warnedSession = true;
          request.onWarning?.(
            `claude: its stream named session ${theirs}, not ${sessionId}; the verdict keeps ${sessionId} (summary.agent_session_id has claude's)`,
          );
        }
        const envelope = check === null ? null : { check, delivered: envelopeFromText(reduction.text), nudges: last ? nudge : 0 };
        return { reduction, envelope };
      },
      maxLineBytes: request.maxLineBytes,
      supervisor,
      onWarning: request.onWarning,
      lingerMs: request.lingerMs,
      graceMs: request.graceMs,
      signal: request.signal,
    });
  };
  return withNudges(nudges, request.signal, turn);
}
