// One phase with an ACP agent: the session declared before the spawn (its id
// agentport's, the agent's own bound once session/new answers), then
// initialize, session/new in the run's folder (session/load on a resume),
// session/prompt, every update through the client reducer, the verdict from
// the prompt's stopReason.
import { AcpClient } from "../../core/acp/reducer.ts";
import type { PermissionAsker } from "../../core/acp/permission.ts";
import { Supervisor } from "../../core/supervisor.ts";
import type { Ledger } from "../../io/ledger.ts";
import { makeRunDir } from "../../io/paths.ts";
import { recordingProgress } from "../../io/run-folder.ts";
import { declaredFrom, runPhase, type RunOutcome } from "../phase.ts";
import { aboutRun, envelopeCheck, envelopeOfText, phaseCommon, toldPrompt, type StreamRunRequest } from "../stream-phase.ts";
import { answerRecorder, driveAcp } from "./driver.ts";
import { physicalPath } from "../../io/physical-path.ts";

export interface AcpRunRequest extends StreamRunRequest {
  /** The ACP agent's argv, its binary resolved. */
  argv: string[];
  clientVersion: string;
  askPermission?: PermissionAsker;
}

export async function runAcp(ledger: Ledger, request: AcpRunRequest): Promise<RunOutcome> {
  const resume = request.resume;
  const id = resume?.id ?? request.newSessionId ?? crypto.randomUUID();
  const runDir = makeRunDir(request.home, id);
  const envelope = envelopeCheck(request.schema, runDir);
  const supervisor = new Supervisor(request.supervision);
  // A loaded session's running cost includes its earlier phases.
  const earlier = resume === undefined ? 0 : (await ledger.phases(id)).reduce((sum, p) => sum + (p.cost_micro_usd ?? 0), 0);
  let binding: Promise<unknown> = Promise.resolve();
  const client = new AcpClient({
    cwd: request.cwd,
    prompt: toldPrompt(request),
    emit: recordingProgress(runDir, { sessionId: id, agent: "acp" }, request.progress),
    loop: supervisor.loop,
    permissionMode: request.permissionMode,
    policy: request.policy,
    physical: physicalPath,
    askPermission: request.askPermission,
    loadSessionId: resume === undefined ? undefined : (resume.agent_session_id ?? undefined),
    earlierCostMicroUsd: earlier,
    clientVersion: request.clientVersion,
    recordAnswer: answerRecorder(runDir),
    onSession: (agentSessionId) => {
      if (resume === undefined) binding = ledger.bindAgentSession(id, agentSessionId).catch(() => {});
    },
  });
  const outcome = await runPhase(ledger, {
    session: {
      id,
      agent: "acp",
      ...declaredFrom(request),
      agentSessionId: null,
      isNew: resume === undefined,
    },
    kind: resume === undefined ? "run" : "resume",
    argv: request.argv,
    ...phaseCommon(request),
    stdin: toldPrompt(request),
    about: aboutRun(request, null),
    runDir,
    reducer: client,
    settled: () => client.over(),
    evidence: () => {
      const reduction = client.reduction();
      return { reduction, envelope: envelopeOfText(envelope, reduction.text), requirement: null };
    },
    supervisor,
    driver: (drive) => driveAcp(drive, client),
  });
  await binding;
  // --max-cost is taken only for an agent known to report its cost (core/acp/cost-reporters.ts); one that still reported none is said, not dropped in silence.
  if (request.supervision.maxCostMicroUsd !== undefined && outcome.verdict.cost_micro_usd === null) {
    request.onWarning?.("--max-cost: the ACP agent reported no cost, so the run was not bounded by cost; bound it with --max-tokens");
  }
  return outcome;
}
