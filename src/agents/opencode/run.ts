// An opencode phase (`opencode run --format json`): agentport's session
// declared first, opencode's `ses_…` id bound as the first record brings it
// (the caller cannot choose it); a resume continues the session the ledger
// bound, refused before opencode runs when there is none (the birth-folder
// guard has already refused another folder, where `run -s` would hang). The
// driver kills opencode's whole process tree at the end: its bash tools
// survive a SIGTERM of opencode.
import { OpencodeReducer } from "../../core/opencode/reducer.ts";
import { failure } from "../../core/failure.ts";
import type { Summary } from "../../core/reduction.ts";
import { Supervisor } from "../../core/supervisor.ts";
import type { Ledger } from "../../io/ledger.ts";
import { makeRunDir } from "../../io/paths.ts";
import { recordingProgress } from "../../io/run-folder.ts";
import { declaredFrom, runPhase, type RunOutcome } from "../phase.ts";
import { aboutRun, envelopeCheck, envelopeOfText, phaseCommon, toldPrompt, type StreamRunRequest } from "../stream-phase.ts";
import { isOpencodeSession, opencodeArgv } from "./argv.ts";

export class OpencodeRefusal extends Error {}

/** The opencode session a resume continues, or why it cannot be resumed (before any process starts). */
export function resumableSession(session: { id: string; agent_session_id: string | null }): string {
  const bound = session.agent_session_id;
  if (bound === null || !isOpencodeSession(bound)) {
    throw new OpencodeRefusal(
      `session ${session.id}: opencode never named its session (no record was seen), so there is nothing to resume`,
    );
  }
  return bound;
}

/** The reduction as the verdict gives it: agentport's session named, opencode's own in the summary. */
export function asSession<R extends { sessionId: string | null; summary: Summary }>(read: R, id: string): R {
  return {
    ...read,
    sessionId: id,
    summary: read.sessionId === null ? read.summary : { ...read.summary, opencode_session_id: read.sessionId },
  };
}

/** What both opencode phases (run and serve) start from: agentport's session, the one a resume continues, the run folder, the envelope check, the supervisor, the progress (recorded), the warnings. */
export function opencodePhase(request: StreamRunRequest) {
  const resume = request.resume;
  const id = resume?.id ?? request.newSessionId ?? crypto.randomUUID();
  const continued = resume === undefined ? undefined : resumableSession(resume);
  const runDir = makeRunDir(request.home, id);
  const supervisor = new Supervisor(request.supervision);
  const session = {
    id,
    agent: "opencode",
    ...declaredFrom(request),
    agentSessionId: null,
    isNew: resume === undefined,
  } as const;
  return {
    id,
    continued,
    envelope: envelopeCheck(request.schema, runDir),
    supervisor,
    progress: recordingProgress(runDir, { sessionId: id, agent: "opencode" }, request.progress),
    /** runPhase's spec but for the argv, the reducer and the evidence. */
    spec: {
      session,
      kind: resume === undefined ? "run" : "resume",
      runDir,
      supervisor,
      about: aboutRun(request, request.model ?? null),
      ...phaseCommon(request),
      stdin: toldPrompt(request),
    },
  };
}

export async function runOpencode(ledger: Ledger, request: StreamRunRequest): Promise<RunOutcome> {
  const { id, continued, envelope, supervisor, progress, spec } = opencodePhase(request);
  let otherSession: string | null = null;
  let binding: Promise<unknown> = Promise.resolve(null);
  const reducer = new OpencodeReducer({
    cwd: request.cwd,
    emit: progress,
    loop: supervisor.loop,
    price: request.price,
    onSession: (sessionId) => {
      if (continued === undefined)
        binding = ledger.bindAgentSession(id, sessionId).then(
          () => null,
          (error: unknown) => error,
        );
      else if (sessionId !== continued) otherSession = sessionId;
    },
  });
  const evidence = () => {
    // The verdict names agentport's session (what `resume` takes); opencode's is in the summary.
    const reduction = asSession(reducer.reduction(), id);
    const requirement =
      otherSession === null
        ? null
        : failure(
            "agent_error",
            `opencode: asked to resume session ${continued}, it answered on ${otherSession}; the session was not continued`,
          );
    return { reduction, envelope: envelopeOfText(envelope, reduction.text), requirement };
  };
  const outcome = await runPhase(ledger, {
    ...spec,
    argv: opencodeArgv({
      bin: request.bin,
      model: request.model,
      thinking: request.thinking,
      permissionMode: request.permissionMode,
      resumeSession: continued,
      agentArgs: request.agentArgs,
    }),
    reducer,
    settled: () => reducer.finished(),
    evidence,
  });
  const unbound = await binding;
  if (unbound !== null) throw unbound;
  return outcome;
}
