// The batch's ledger rows: its sessions (declared before their agent starts),
// its phases, its workspaces. A write the ledger refuses after the batch has
// started is said, not thrown: the batch's result does not depend on it.
import type { FinishPhaseInput, Ledger } from "../io/ledger.ts";
import { clean } from "../core/text.ts";
import type { AgentName } from "../core/agents.ts";

export interface SessionDeclaration {
  id: string;
  agent: AgentName;
  cwd: string;
  model: string | null;
  /** $AGENTPORT_PHASE: prime, arm-k. */
  phase: string;
  parentId: string | null;
  sessionFile?: string | null;
  agentSessionId?: string | null;
}

export class Recorder {
  constructor(
    private readonly ledger: Ledger,
    readonly batchId: string,
    private readonly context: { sessionDir: string | null; profile: string | null; say: (line: string) => void },
  ) {}

  async declare(d: SessionDeclaration): Promise<void> {
    await this.ledger.declareSession({
      id: d.id,
      agent: d.agent,
      cwd: d.cwd,
      model: d.model,
      agentSessionId: d.agentSessionId ?? null,
      sessionFile: d.sessionFile ?? null,
      sessionDir: this.context.sessionDir,
      parentId: d.parentId,
      profile: this.context.profile,
      env: { AGENTPORT_PHASE: d.phase, AGENTPORT_RUN_ID: this.batchId },
    });
  }

  async start(sessionId: string, kind: string, name: string): Promise<number> {
    return (await this.ledger.startPhase({ sessionId, kind, name, runId: this.batchId })).id;
  }

  async finish(id: number, outcome: FinishPhaseInput): Promise<void> {
    await this.quietly(`phase ${id}`, () => this.ledger.finishPhase(id, outcome));
  }

  async bind(id: string, session: { sessionId: string | null; sessionFile: string | null }): Promise<void> {
    const agentId = session.sessionId;
    if (agentId === null) return;
    await this.quietly(`session ${id}`, () => this.ledger.bindAgentSession(id, agentId, session.sessionFile));
  }

  private async quietly(what: string, write: () => Promise<unknown>): Promise<void> {
    try {
      await write();
    } catch (error) {
      this.context.say(`bon: the ledger did not take ${what}: ${clean((error as Error)?.message ?? String(error), 300)}`);
    }
  }
}
