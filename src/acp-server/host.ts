// The world behind `agentport acp`: each ACP session is an agentport session
// of the chosen agent, its id the ledger's (the first prompt declares it, in
// the client's cwd: its birth folder); each prompt is one supervised phase on
// the same path as `agentport run` / `resume`; session/load takes a session of
// the ledger under the birth-host and birth-folder rules; session/cancel
// aborts the phase as Ctrl-C does.
import { ProgressForward, promptAnswer } from "../core/acp/forward.ts";
import type { PermissionAsker } from "../core/acp/permission.ts";
import { RPC_ERRORS, type PromptResult, type RpcError, type SessionUpdate } from "../core/acp/protocol.ts";
import type { AcpServerHost, HostAnswer } from "../core/acp/server.ts";
import { AgentportError } from "../core/errors.ts";
import { secrets } from "../core/redact.ts";
import { clean } from "../core/text.ts";
import { UnrecordedVerdict, type RunOutcome } from "../agents/phase.ts";
import { adapterOf, agentBinary } from "../agents/table.ts";
import type { AgentKind } from "../config/resolve.ts";
import type { Ledger } from "../io/ledger.ts";
import { stillRunning } from "../io/reap.ts";
import { appendVerdictRecord, writeVerdict } from "../io/run-folder.ts";
import { verdictRecord } from "../core/progress.ts";
import { agentSetup, folder, projectConfig, type AgentSetup } from "../cli/agent-options.ts";
import { isolateSetup } from "../cli/isolation.ts";
import { birthOf } from "../cli/commands/resume.ts";
import { refusal } from "../cli/commands/resume-refusal.ts";

/** A session refused by the birth rules or still running elsewhere. */
export const SESSION_REFUSED = -32001;

interface Session {
  cwd: string;
  setup: AgentSetup;
  bin: string;
  /** In the ledger: every later prompt is a resume of it. */
  declared: boolean;
  controller: AbortController | null;
  cancelAsked: boolean;
}

export interface HostOptions {
  /** The command line's flags (commandLine), as `run` takes them. */
  flags: Record<string, unknown>;
  passThrough: string[];
  ledger: Ledger;
}

const failed = (code: number, message: string): { ok: false; error: RpcError } => ({
  ok: false,
  error: { code, message: clean(secrets.diagnostic(message), 600) },
});

/** A failure of a setup (a flag, a file, the agent's binary, a refusal), as the answer's one line. */
function refusedBy(error: unknown): { ok: false; error: RpcError } {
  if (!(error instanceof AgentportError) || error.kind === "internal") throw error;
  return failed(error.kind === "refused" ? SESSION_REFUSED : RPC_ERRORS.invalidParams, error.message);
}

export class AgentportHost implements AcpServerHost {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly options: HostOptions) {}

  private async setupFor(
    cwd: string,
    born: { agent: AgentKind; request: Record<string, unknown> } | null,
  ): Promise<{ setup: AgentSetup; bin: string; cwd: string }> {
    const real = folder(cwd);
    // A loaded session keeps its agent: the command line's --agent names new sessions only.
    const flags = born === null ? this.options.flags : { ...this.options.flags, agent: undefined };
    const config = await projectConfig(flags, real);
    const setup = agentSetup(
      { flags, passThrough: this.options.passThrough, session: born?.request as never },
      real,
      born === null ? { useDefault: true, config } : { agent: born.agent, config },
    );
    const bin = agentBinary(adapterOf(setup.agent), setup.args);
    isolateSetup(setup);
    return { setup, bin, cwd: real };
  }

  async newSession(cwd: string): Promise<HostAnswer<{ sessionId: string }>> {
    try {
      const made = await this.setupFor(cwd, null);
      const sessionId = crypto.randomUUID();
      this.sessions.set(sessionId, { ...made, declared: false, controller: null, cancelAsked: false });
      return { ok: true, result: { sessionId } };
    } catch (error) {
      return refusedBy(error);
    }
  }

  async loadSession(sessionId: string, cwd: string): Promise<HostAnswer<null>> {
    const ledger = this.options.ledger;
    if (this.sessions.has(sessionId)) return { ok: true, result: null };
    const row = await ledger.getSession(sessionId);
    if (row === null)
      return failed(
        RPC_ERRORS.invalidParams,
        `invalid params: no session ${sessionId} in the ledger (${ledger.path}); create one with session/new`,
      );
    let real: string;
    try {
      real = folder(cwd);
    } catch (error) {
      return refusedBy(error);
    }
    const reason = refusal({ ledger, row, session: row, onDisk: null }, real, ledger.thisHost());
    if (reason !== null) return failed(SESSION_REFUSED, reason);
    const busy = await stillRunning(ledger, sessionId);
    if (busy !== null)
      return failed(
        SESSION_REFUSED,
        `refused: session ${sessionId} is still running (agentport pid ${busy.runner_pid}, phase ${busy.seq}); wait for it to finish`,
      );
    try {
      const born = birthOf(row, false);
      const made = await this.setupFor(real, { agent: row.agent, request: born.request });
      this.sessions.set(sessionId, { ...made, declared: true, controller: null, cancelAsked: false });
      return { ok: true, result: null };
    } catch (error) {
      return refusedBy(error);
    }
  }

  async prompt(
    sessionId: string,
    text: string,
    update: (update: SessionUpdate) => void,
    ask: PermissionAsker,
  ): Promise<HostAnswer<PromptResult>> {
    const session = this.sessions.get(sessionId);
    if (session === undefined) return failed(RPC_ERRORS.invalidParams, `invalid params: no session ${sessionId}`);
    const ledger = this.options.ledger;
    const controller = new AbortController();
    session.controller = controller;
    session.cancelAsked = false;
    const forward = new ProgressForward(update);
    const row = session.declared ? await ledger.getSession(sessionId) : null;
    const adapter = adapterOf(session.setup.agent);
    let outcome: RunOutcome;
    try {
      outcome = await adapter.run(ledger, session.setup, {
        bin: session.bin,
        prompt: text,
        ...(row === null ? { sessionId } : { resume: row }),
        progress: (event) => forward.event(event),
        signal: controller.signal,
        askPermission: ask,
      });
    } catch (error) {
      if (error instanceof UnrecordedVerdict) outcome = error.outcome;
      else if (error instanceof AgentportError && error.kind !== "internal") return failed(RPC_ERRORS.invalidRequest, error.message);
      else throw error;
    } finally {
      session.controller = null;
      forward.close();
    }
    session.declared = session.declared || (await ledger.getSession(sessionId)) !== null;
    // The phase's folder keeps the verdict and its last progress record, as after `agentport run`.
    writeVerdict(outcome.runDir, outcome.verdict);
    appendVerdictRecord(outcome.runDir, verdictRecord(outcome.verdict, outcome.exitCode));
    const verdict = secrets.verdict(outcome.verdict);
    if (verdict.ok && verdict.text) update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: verdict.text } });
    return promptAnswer(verdict, outcome.exitCode, session.cancelAsked);
  }

  cancel(sessionId: string): void {
    const session = this.sessions.get(sessionId);
    if (session?.controller == null) return;
    session.cancelAsked = true;
    session.controller.abort();
  }
}
