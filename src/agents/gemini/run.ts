// A gemini phase (`gemini --output-format stream-json`, prompt on stdin): the
// session id chosen and declared before the spawn, the verdict from
// result.status (never the exit code), one process (no relaunch) whose group
// and every descendant go when it ends (its shell tool sits in a group of its
// own).
import { GeminiReducer } from "../../core/gemini/reducer.ts";
import { failure } from "../../core/failure.ts";
import { Supervisor } from "../../core/supervisor.ts";
import type { Ledger } from "../../io/ledger.ts";
import type { DriveResult } from "../../io/spawn.ts";
import { makeRunDir } from "../../io/paths.ts";
import { recordingProgress } from "../../io/run-folder.ts";
import { declaredFrom, runPhase, type RunOutcome } from "../phase.ts";
import { aboutRun, envelopeCheck, envelopeOfText, phaseCommon, toldPrompt, type StreamRunRequest } from "../stream-phase.ts";
import { GEMINI_ENV, geminiArgv, geminiModel, UNTRUSTED_EXIT } from "./argv.ts";

export interface GeminiRunRequest extends StreamRunRequest {
  /** The user trusts the folder in agentport's sense: gemini gets --skip-trust. */
  trusted: boolean;
}

export function runGemini(ledger: Ledger, request: GeminiRunRequest): Promise<RunOutcome> {
  const resume = request.resume;
  const id = resume?.agent_session_id ?? resume?.id ?? request.newSessionId ?? crypto.randomUUID();
  const sessionId = resume?.id ?? id;
  const runDir = makeRunDir(request.home, sessionId);
  const envelope = envelopeCheck(request.schema, runDir);
  const supervisor = new Supervisor(request.supervision);
  const reducer = new GeminiReducer({
    cwd: request.cwd,
    emit: recordingProgress(runDir, { sessionId: sessionId, agent: "gemini" }, request.progress),
    loop: supervisor.loop,
    price: request.price,
  });
  const evidence = (result: DriveResult) => {
    const reduction = reducer.reduction();
    let requirement = null;
    if (reduction.sessionId !== null && reduction.sessionId !== id)
      requirement = failure("agent_error", `gemini: answered on session ${reduction.sessionId}, not on ${id}`);
    else if (result.exitCode === UNTRUSTED_EXIT && reduction.sessionId === null) {
      requirement = failure(
        "environment",
        `gemini: it does not trust ${request.cwd} (exit ${UNTRUSTED_EXIT}); agentport passes --skip-trust only where a trusted agentport.json applies (agentport trust), or set GEMINI_CLI_TRUST_WORKSPACE=true`,
      );
    }
    return { reduction, envelope: envelopeOfText(envelope, reduction.text), requirement };
  };
  // gemini's shell tool runs in a session of its own: the driver kills the agent's whole /proc tree, not only its group.
  return runPhase(ledger, {
    session: {
      id: sessionId,
      agent: "gemini",
      ...declaredFrom(request),
      agentSessionId: id,
      isNew: resume === undefined,
    },
    kind: resume === undefined ? "run" : "resume",
    argv: geminiArgv({
      bin: request.bin,
      sessionId: id,
      resume: resume !== undefined,
      model: request.model,
      tools: request.tools,
      permissionMode: request.permissionMode,
      trusted: request.trusted,
      agentArgs: request.agentArgs,
    }),
    ...phaseCommon(request),
    stdin: toldPrompt(request),
    about: aboutRun(request, geminiModel(request.model)),
    env: { ...request.env, ...GEMINI_ENV },
    runDir,
    reducer,
    settled: () => reducer.settled(),
    evidence,
    supervisor,
  });
}
