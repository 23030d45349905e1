// An opencode phase in serve mode (`--serve`): the same phase as every agent
// (runPhase: declared first, judged, recorded), with opencode's HTTP / SSE
// driver (serve-driver.ts) in the place of the process driver. agentport's
// session is declared before the server starts; opencode's `ses_…` id, made
// by `POST /session`, is bound in the ledger before the prompt is sent. A
// resume continues the bound session (in its birth folder: checked before).
//
// Permission requests are answered as the ACP bridge answers them
// (decidePermission): by the --permissions file, else the mode
// (`bypassPermissions` allows each once, `acceptEdits` file edits); a
// rejection carries a message saying how to allow it (the model is told, and
// goes on), and is recorded as refused. The run folder's stream.jsonl keeps the
// session's event data lines, which `agentport replay --agent opencode` reads.
import { OpencodeServeReducer, type PermissionAsked } from "../../core/opencode/serve-reducer.ts";
import { policyRequest } from "../../core/opencode/serve-permissions.ts";
import { decidePermission, type PermissionRules } from "../../core/permissions.ts";
import type { Ledger } from "../../io/ledger.ts";
import { physicalPath } from "../../io/physical-path.ts";
import type { PermissionReply } from "../../io/opencode-server.ts";
import { serveArgv } from "../../io/opencode-start.ts";
import { runPhase, type RunOutcome } from "../phase.ts";
import { envelopeOfText, type StreamRunRequest } from "../stream-phase.ts";
import { asSession, opencodePhase } from "./run.ts";
import { ServeHooks, serveDriver } from "./serve-driver.ts";

/** The reply a permission request gets, decided as every agent's asks are (the --permissions file, else the mode), with the model's message for a rejection. */
export function permissionAnswer(rules: PermissionRules, asked: PermissionAsked): { reply: PermissionReply; message?: string } {
  const { decision, how } = decidePermission(rules, policyRequest(asked, rules));
  if (decision === "allow") return { reply: "once" };
  return { reply: "reject", message: `agentport runs this unattended and refused ${asked.permission}; do without it (${how})` };
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
      answer: (asked) =>
        permissionAnswer({ mode: request.permissionMode, policy: request.policy, cwd: request.cwd, physical: physicalPath }, asked),
    },
    hooks,
  );
  return runPhase(ledger, { ...spec, argv: serveArgv(request.bin), reducer, settled: () => reducer.finished(), evidence, driver });
}
