// The seam between a batch and its agent: how the prime's session is made
// and judged, how each arm's session starts from it in the arm's workspace,
// and how every process of the agent is stopped. The batch (prime.ts,
// arm.ts, batch.ts) only sees this; pi (pi-agent.ts) and opencode
// (opencode-oneshot.ts, opencode-served.ts) and every agent through the run
// path (run-path.ts) implement it.
import type { EnvelopeDelivery } from "../core/instructions.ts";
import type { ProgressSink } from "../core/progress.ts";
import { clean } from "../core/text.ts";
import type { CostSource } from "../core/prices.ts";
import type { Refused, Verdict } from "../core/verdict.ts";
import { AgentportError } from "../core/errors.ts";
import type { Usage } from "../rpc/usage.ts";
import type { SessionsKind } from "./harvest.ts";
import type { ArmsFrom, BonAgentName } from "./names.ts";
import { causeOfVerdict, type Cause } from "./result.ts";
import type { Workspace } from "./workspace.ts";

export interface Turned {
  verdict: Verdict | null;
  usage: Usage;
  /** How the cost was known: reported by the agent, derived from a price, or unknown. */
  costSource: CostSource;
  /** The requests refused during the turn (dialogs, denied tools), as the verdict lists them and those the agent asked outside the turn. */
  refused: Refused[];
  /** Empty when the turn ended well; else why not. */
  reason: string;
  cause: Cause;
}

export interface SessionRequest {
  /** prime, arm-k: the phase, and the name of the run folder's logs. */
  label: string;
  /** agentport's session id (declared already). */
  sessionId: string;
  model: string | null;
  progress: ProgressSink;
}

/** The agent's own name of a session: its id, and its file where it has one. */
export interface AgentSession {
  readonly sessionId: string | null;
  readonly sessionFile: string | null;
  /** The agentport session of a turn run through the run path (`agentport resume` continues it); absent for the batch's own sessions. */
  readonly runSessionId?: string | null;
}

export interface BonAgent<S extends AgentSession = AgentSession> {
  /** The batch's agent; null: a cross-agent batch (each arm names its own). */
  readonly name: BonAgentName | null;
  readonly kind: SessionsKind;
  readonly armsFrom: ArmsFrom;
  /** Session k's agent (k = 0: the prime). */
  agentOf(k: number): BonAgentName;
  /** Where the agent keeps its session files, for the ledger (null: in its own database). */
  readonly sessionDir: string | null;
  /** How session k hands its envelope to agentport (the briefs say it). */
  delivery(k: number): EnvelopeDelivery;
  /** Ctrl-C came. */
  readonly interrupted: boolean;
  /** The prime's agent session as the ledger declares it, before anything runs (pi names its file first). */
  declarePrime(primeId: string, cwd: string): AgentSession;
  /** k = 0: the prime's session; k ≥ 1: arm k's, started from the prime's, working in `ws`. Throws when it cannot start. */
  open(k: number, ws: Workspace, r: SessionRequest): Promise<S>;
  /** One turn, judged; its usage is the session's own (an arm's: since it left the prime). */
  turn(session: S, text: string, model: string | null): Promise<Turned>;
  /** After the prime's turn: "" when the arms can start from it, else why not. */
  primed(session: S): Promise<string>;
  /** Session k is done with (its process, when it has one of its own, closed). */
  release(k: number): Promise<void>;
  /** Ctrl-C: every running turn aborted. */
  abortAll(): void;
  /** Synchronous, for process exit: nothing of the agent's may survive agentport. */
  killAll(): void;
  closeAll(): Promise<void>;
}

/** A turn with no usage known: it did not start, or no verdict came (or one came with an error). */
export const noTurn = (reason: string, cause: Cause, verdict: Verdict | null = null): Turned => ({
  verdict,
  usage: { tokens: null, costMicroUsd: null },
  costSource: "unknown",
  refused: verdict?.refused ?? [],
  reason,
  cause,
});

/** A judged verdict as the batch's turn; `usage` the session's own when it is not the verdict's (a pi clone's: since the clone). */
export function turnOf(
  v: Verdict,
  usage: Usage = { tokens: v.tokens, costMicroUsd: v.cost_micro_usd },
  refusedBefore: Refused[] = [],
): Turned {
  return {
    verdict: v,
    usage,
    costSource: usage.costMicroUsd === null ? "unknown" : v.cost_source,
    refused: [...refusedBefore, ...v.refused],
    reason: v.ok ? "" : (v.failure?.message ?? v.status),
    cause: v.ok ? "failed" : causeOfVerdict(v),
  };
}

export const errorMessage = (error: unknown) => clean((error as Error)?.message ?? String(error), 400);

/** What a thrown start or turn stands for: an agent (or its server) that could not start is the environment's fault. */
export const causeOfError = (error: unknown): Cause =>
  error instanceof AgentportError && error.kind === "environment" ? "environment" : "failed";
