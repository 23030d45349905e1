// Any agent behind the batch's seam (sessions.ts) through `agentport run`'s
// path: each turn is one run of its agent's row of the adapter table, a new
// session in the workspace, with the settings `run` resolved for that agent.
// Where the row says its arms can fork the prime (`bon.armsFrom`: claude's
// `--resume ID --fork-session`, in the prime's folder: one workspace), the
// prime is run and paid once and each arm forks it; else (codex, gemini, any
// agent with --parallel, a cross-agent batch) there is no prime and each arm
// reads the spec itself (arms_from "spec").
import type { AgentSetup } from "../agents/setup.ts";
import { adapterOf } from "../agents/table.ts";
import { ENVELOPE_TOOL } from "../core/pi/reducer.ts";
import type { EnvelopeDelivery } from "../core/instructions.ts";
import { AgentportError } from "../core/errors.ts";
import type { Ledger, SessionRow } from "../io/ledger.ts";
import type { BatchPlace } from "./agents.ts";
import type { BonAgentName } from "./names.ts";
import type { BonOptions } from "./options.ts";
import { causeOfVerdict } from "./result.ts";
import { errorMessage, type AgentSession, type BonAgent, type SessionRequest, type Turned } from "./sessions.ts";
import type { Workspace } from "./workspace.ts";

export interface RunPathSession extends AgentSession {
  label: string;
  cwd: string;
  agent: BonAgentName;
  progress: SessionRequest["progress"];
  sessionId: string | null;
  runSessionId: string | null;
}

const NO_TURN = { verdict: null, usage: { tokens: null, costMicroUsd: null }, costSource: "unknown", refused: [] } as const;

export class RunPathAgent implements BonAgent<RunPathSession> {
  readonly kind = "one-shot";
  readonly sessionDir = null;
  readonly name: BonAgentName | null;
  readonly armsFrom: "fork" | "spec";
  /** The prime's run, once it has primed (fork mode). */
  private prime: SessionRow | null = null;

  constructor(
    private readonly o: BonOptions,
    private readonly ledger: Ledger,
    private readonly batch: BatchPlace,
  ) {
    this.name = o.agent;
    // A fork stays in its source's folder (claude keeps sessions per folder): only with one workspace.
    this.armsFrom = o.agent !== null && adapterOf(o.agent).bon?.armsFrom === "fork" && !o.parallel ? "fork" : "spec";
  }

  get interrupted(): boolean {
    return this.o.signal?.aborted === true;
  }

  /** k = 0 (the batch's own session, no turn): the first arm's agent. */
  agentOf(k: number): BonAgentName {
    return this.o.agents[Math.max(0, k - 1)] ?? this.o.agents[0]!;
  }

  delivery(k: number): EnvelopeDelivery {
    return this.agentOf(k) === "pi" ? { tool: ENVELOPE_TOOL } : { fenced: true };
  }

  declarePrime(): AgentSession {
    return { sessionId: null, sessionFile: null };
  }

  async open(k: number, ws: Workspace, r: SessionRequest): Promise<RunPathSession> {
    return {
      label: r.label,
      cwd: ws.cwd,
      agent: this.agentOf(k),
      progress: r.progress,
      sessionId: null,
      sessionFile: null,
      runSessionId: null,
    };
  }

  async turn(session: RunPathSession, text: string, model: string | null): Promise<Turned> {
    if (this.interrupted) return { ...NO_TURN, refused: [], reason: "interrupted before the turn started", cause: "interrupted" };
    const agent = session.agent;
    try {
      const fork = session.label === "prime" ? undefined : (this.prime ?? undefined);
      const outcome = await adapterOf(agent).run(this.ledger, this.setupOf(session, model), {
        bin: this.o.bins[agent]!,
        prompt: text,
        fork,
        progress: session.progress,
        signal: this.o.signal,
      });
      const v = outcome.verdict;
      session.runSessionId = v.session_id;
      session.sessionId = v.session_id === null ? null : ((await this.ledger.getSession(v.session_id))?.agent_session_id ?? null);
      return {
        verdict: v,
        usage: { tokens: v.tokens, costMicroUsd: v.cost_micro_usd },
        costSource: v.cost_source,
        refused: v.refused,
        reason: v.ok ? "" : (v.failure?.message ?? v.status),
        cause: v.ok ? "failed" : causeOfVerdict(v),
      };
    } catch (error) {
      // A run refused before it started (usage) or an agent that is not there (environment): nothing spent.
      const cause = error instanceof AgentportError && error.kind === "environment" ? "environment" : "failed";
      return { ...NO_TURN, refused: [], reason: `${agent}: ${errorMessage(error)}`, cause };
    }
  }

  /** The agent's settings as `run` resolved them, in the arm's workspace, on the arm's model, with the batch's envelope. */
  private setupOf(session: RunPathSession, model: string | null): AgentSetup {
    const base = this.o.setups[session.agent]!;
    const env = { ...base.common.env, AGENTPORT_PHASE: session.label, AGENTPORT_RUN_ID: this.batch.id, ...this.batch.gitCeiling };
    return { ...base, model: model ?? base.model, schema: this.o.schema, common: { ...base.common, cwd: session.cwd, env } };
  }

  async primed(session: RunPathSession): Promise<string> {
    this.prime = session.runSessionId === null ? null : await this.ledger.getSession(session.runSessionId);
    return this.prime === null ? `${session.agent} named no session for the prime: the arms cannot fork it` : "";
  }

  async release(): Promise<void> {
    // Each turn's process is gone when its run ends.
  }

  abortAll(): void {
    // The batch's signal stops every running turn (the run path's driver).
  }

  killAll(): void {
    // The keeper ends every agent the run path started when agentport exits (src/io/keeper.ts).
  }

  async closeAll(): Promise<void> {}
}
