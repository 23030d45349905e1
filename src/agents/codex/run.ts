// A codex phase (`codex exec --json`): agentport's session declared first,
// codex's thread id bound as it arrives in thread.started (the caller cannot
// choose it); a resume continues the thread the ledger bound, refused before
// codex runs when there is none, and fails when codex answers on another
// thread (a non-UUID id silently starts a new one). The refusals come from
// stderr once codex is gone; a stall while codex waits for the network (it
// retries a refused connection forever) is classified as a network fault by
// the judge, from the retry it was waiting on.
import { CodexReducer } from "../../core/codex/reducer.ts";
import { failure } from "../../core/failure.ts";
import { Supervisor } from "../../core/supervisor.ts";
import type { Ledger } from "../../io/ledger.ts";
import { makeRunDir } from "../../io/paths.ts";
import { recordingProgress } from "../../io/run-folder.ts";
import { workTreeTop } from "../../io/git.ts";
import { declaredFrom, runPhase, type RunOutcome } from "../phase.ts";
import { aboutRun, earlierTokens, envelopeCheck, envelopeOfText, phaseCommon, readStderr, type StreamRunRequest } from "../stream-phase.ts";
import { codexArgv, codexModel, isThreadId } from "./argv.ts";

export class CodexRefusal extends Error {}

export interface CodexRunRequest extends StreamRunRequest {
  /** The installed codex has --output-schema (it asks the model for the envelope; agentport checks it). */
  outputSchema?: boolean;
}

/** The thread a resume continues, or why it cannot be resumed (before any process starts). */
export function resumableThread(session: { id: string; agent_session_id: string | null }): string {
  const thread = session.agent_session_id;
  if (thread === null || !isThreadId(thread)) {
    throw new CodexRefusal(
      `session ${session.id}: codex never named its thread (no thread.started was seen), so there is nothing to resume`,
    );
  }
  return thread;
}

export async function runCodex(ledger: Ledger, request: CodexRunRequest): Promise<RunOutcome> {
  const resume = request.resume;
  const id = resume?.id ?? request.newSessionId ?? crypto.randomUUID();
  const thread = resume === undefined ? undefined : resumableThread(resume);
  const runDir = makeRunDir(request.home, id);
  const envelope = envelopeCheck(request.schema, runDir);
  const supervisor = new Supervisor(request.supervision);
  let otherThread: string | null = null;
  let binding: Promise<unknown> = Promise.resolve(null);
  const reducer = new CodexReducer({
    cwd: request.cwd,
    emit: recordingProgress(runDir, { sessionId: id, agent: "codex" }, request.progress),
    loop: supervisor.loop,
    previous: resume === undefined ? null : await earlierTokens(ledger, id),
    price: request.price,
    onThread: (threadId) => {
      if (thread === undefined)
        binding = ledger.bindAgentSession(id, threadId).then(
          () => null,
          (error: unknown) => error,
        );
      else if (threadId !== thread) otherThread = threadId;
    },
  });
  const evidence = () => {
    reducer.takeStderr(readStderr(runDir));
    // The verdict names agentport's session (what `resume` takes); codex's thread is in the summary.
    const reduction = { ...reducer.reduction(), sessionId: id };
    const requirement =
      otherThread === null
        ? null
        : failure(
            "agent_error",
            `codex: asked to resume thread ${thread}, it answered on a new thread ${otherThread}; the session was not continued`,
          );
    return { reduction, envelope: envelopeOfText(envelope, reduction.text), requirement };
  };
  const outcome = await runPhase(ledger, {
    session: {
      id,
      agent: "codex",
      ...declaredFrom(request),
      agentSessionId: null,
      isNew: resume === undefined,
    },
    kind: resume === undefined ? "run" : "resume",
    argv: codexArgv({
      bin: request.bin,
      model: request.model,
      thinking: request.thinking,
      permissionMode: request.permissionMode,
      inGit: (await workTreeTop(request.cwd)) !== null,
      resumeThread: thread,
      outputSchema: request.outputSchema === false ? undefined : envelope?.file,
      appendSystemPrompt: request.appendSystemPrompt,
      agentArgs: request.agentArgs,
    }),
    ...phaseCommon(request),
    about: aboutRun(request, request.model ? codexModel(request.model) : null),
    runDir,
    reducer,
    settled: () => reducer.settled(),
    evidence,
    supervisor,
  });
  const unbound = await binding;
  if (unbound !== null) throw unbound;
  return outcome;
}
