// An opencode phase (`opencode run --format json`): agentport's session
// declared first, opencode's `ses_…` id bound as the first record brings it
// (the caller cannot choose it); a resume continues the session the ledger
// bound, refused before opencode runs when there is none (the birth-folder
// guard has already refused another folder, where `run -s` would hang). The
// driver kills opencode's whole process tree at the end: its bash tools
// survive a SIGTERM of opencode.
import { OpencodeReducer } from "../../core/opencode/reducer.ts";
import { failure } from "../../core/failure.ts";
import { Supervisor } from "../../core/supervisor.ts";
import type { Ledger } from "../../io/ledger.ts";
import { makeRunDir } from "../../io/paths.ts";
import { runPhase, type RunOutcome } from "../phase.ts";
import { envelopeCheck, envelopeOfText, passThrough, type StreamRunRequest } from "../stream-phase.ts";
import { isOpencodeSession, opencodeArgv } from "./argv.ts";

export class OpencodeRefusal extends Error {}

/** The opencode session a resume continues, or why it cannot be resumed (before any process starts). */
export function resumableSession(session: { id: string; agent_session_id: string | null }): string {
  const bound = session.agent_session_id;
  if (bound === null || !isOpencodeSession(bound)) {
    throw new OpencodeRefusal(`session ${session.id}: opencode never named its session (no record was seen), so there is nothing to resume`);
  }
  return bound;
}

export async function runOpencode(ledger: Ledger, request: StreamRunRequest): Promise<RunOutcome> {
  const resume = request.resume;
  const id = resume?.id ?? crypto.randomUUID();
  const continued = resume === undefined ? undefined : resumableSession(resume);
  if (request.tools !== undefined && request.tools.length > 0) request.onWarning?.("opencode: --tools is not passed on (opencode's permission rules bound it)");
  if (request.thinking !== undefined) request.onWarning?.("opencode: --thinking is not passed on");
  const runDir = makeRunDir(request.home, id);
  const envelope = envelopeCheck(request.schema, runDir);
  const supervisor = new Supervisor(request.supervision);
  let otherSession: string | null = null;
  let binding: Promise<unknown> = Promise.resolve(null);
  const reducer = new OpencodeReducer({
    cwd: request.cwd,
    emit: request.progress,
    loop: supervisor.loop,
    price: request.price,
    onSession: (sessionId) => {
      if (continued === undefined) binding = ledger.bindAgentSession(id, sessionId).then(() => null, (error: unknown) => error);
      else if (sessionId !== continued) otherSession = sessionId;
    },
  });
  const evidence = () => {
    // The verdict names agentport's session (what `resume` takes); opencode's is in the summary.
    const read = reducer.reduction();
    const reduction = { ...read, sessionId: id, summary: read.sessionId === null ? read.summary : { ...read.summary, opencode_session_id: read.sessionId } };
    const requirement = otherSession === null ? null : failure("agent_error", `opencode: asked to resume session ${continued}, it answered on ${otherSession}; the session was not continued`);
    return { reduction, envelope: envelopeOfText(envelope, reduction.text), requirement };
  };
  const outcome = await runPhase(ledger, {
    session: { id, agent: "opencode", cwd: request.cwd, model: request.model ?? null, agentSessionId: null, profile: request.profile?.join(",") ?? null, request: request.request ?? null, isNew: resume === undefined },
    kind: resume === undefined ? "run" : "resume",
    argv: opencodeArgv({ bin: request.bin, model: request.model, permissionMode: request.permissionMode, resumeSession: continued }),
    ...passThrough(request),
    runDir,
    reducer,
    settled: () => reducer.finished(),
    evidence,
    supervisor,
  });
  const unbound = await binding;
  if (unbound !== null) throw unbound;
  return outcome;
}
