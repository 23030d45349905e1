// An opencode phase in serve mode (`--serve`): the same phase as every agent
// (runPhase: declared first, judged, recorded), with opencode's HTTP / SSE
// driver (serve-driver.ts) in the place of the process driver. agentport's
// session is declared before the server starts; opencode's `ses_…` id, made
// by `POST /session`, is bound in the ledger before the prompt is sent. A
// resume continues the bound session (in its birth folder: checked before).
//
// Permission requests are answered by policy: `bypassPermissions` allows
// each once; `acceptEdits` allows file edits once; every other request is
// rejected with a message saying how to allow it (the model is told, and goes
// on), and recorded as refused. The run folder's stream.jsonl keeps the
// session's event data lines, which `agentport replay --agent opencode` reads.
import type { PermissionMode } from "../../core/agents.ts";
import { OpencodeServeReducer, type PermissionAsked } from "../../core/opencode/serve-reducer.ts";
import type { Ledger } from "../../io/ledger.ts";
import { serveArgv, type PermissionReply } from "../../io/opencode-server.ts";
import { runPhase, type RunOutcome } from "../phase.ts";
import { envelopeOfText, type StreamRunRequest } from "../stream-phase.ts";
import { asSession, opencodePhase } from "./run.ts";
import { ServeHooks, serveDriver } from "./serve-driver.ts";

// opencode's permission for file changes (write, edit, patch).
const EDIT_PERMISSION = "edit";

/** The reply a permission request gets under `mode`, with the model's message for a rejection. */
export function permissionAnswer(mode: PermissionMode | undefined, asked: PermissionAsked): { reply: PermissionReply; message?: string } {
  if (mode === "bypassPermissions") return { reply: "once" };
  if (mode === "acceptEdits" && asked.permission === EDIT_PERMISSION) return { reply: "once" };
  const allow = asked.permission === EDIT_PERMISSION ? "--permission-mode acceptEdits" : "--permission-mode bypassPermissions";
  return {
    reply: "reject",
    message: `agentport runs this unattended and refused ${asked.permission}; do without it (to allow it, the user would run with ${allow})`,
  };
}

export async function runOpencodeServe(ledger: Ledger, request: StreamRunRequest & { startTimeoutMs?: number }): Promise<RunOutcome> {
  const { id, continued, envelope, supervisor, progress, spec } = opencodePhase(request);
  if (request.model !== undefined && !request.model.includes("/"))
    request.onWarning?.(`opencode: --model ${request.model} is not provider/model: the server's default model answers`);
  const hooks = new ServeHooks();
  const reducer = new OpencodeServeReducer({
    cwd: request.cwd,
    emit: progress,
    loop: supervisor.loop,
    price: request.price,
    onPermission: (asked) => hooks.onPermission(asked),
  });
  const evidence = () => {
    // The verdict names agentport's session (what `resume` takes); opencode's is in the summary.
    const read = asSession(reducer.reduction(), id);
    const reduction = { ...read, summary: { ...read.summary, serve: true } };
    return { reduction, envelope: envelopeOfText(envelope, reduction.text), requirement: null };
  };
  const driver = serveDriver(
    {
      reducer,
      continued,
      model: request.model,
      startTimeoutMs: request.startTimeoutMs,
      onSession: async (sessionId) => {
        await ledger.bindAgentSession(id, sessionId);
      },
      answer: (asked) => permissionAnswer(request.permissionMode, asked),
    },
    hooks,
  );
  return runPhase(ledger, { ...spec, argv: serveArgv(request.bin), reducer, settled: () => reducer.finished(), evidence, driver });
}
