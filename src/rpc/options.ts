// How a live pi session is started and supervised: the same pi flags as a
// phase, plus the session's own bounds. No process here.
import type { PiArgvRequest } from "../core/pi/argv.ts";
import type { BudgetOptions } from "../core/budget.ts";
import type { Env } from "../core/env.ts";
import type { ProgressSink } from "../core/progress.ts";
import type { RpcSession } from "./protocol.ts";

/** The same pi flags as a phase (`PiArgvRequest` less the mode), plus how to run the session. */
export interface PiRpcStartOptions extends Omit<PiArgvRequest, "mode"> {
  cwd: string;
  env: Env;
  stderrFile: string;
  /** Per command (default 30 s); also how long an abort may take before pi is stopped. */
  commandTimeoutMs?: number;
  /** Per turn, from the prompt: then the turn is aborted and judged "timeout". */
  turnTimeoutMs?: number;
  /** --grace: this long before the turn's timeout, the running turn is told to wrap up (RPC `steer`). */
  turnGraceMs?: number;
  /** No stdout for this long during a turn: it is aborted and judged "stalled". */
  stallMs?: number;
  /** Loop detection per turn (the same tool call K times, a ping-pong, the same text): aborted, "looping". Default 5; null turns it off. */
  loopRepeat?: number | null;
  /** A token budget per turn (weighted as for a phase): enforce aborts the turn, "over_budget". */
  budget?: BudgetOptions | null;
  maxLineBytes: number;
  onProgress?: ProgressSink;
  /** A supervisor warning (the budget in warn mode), said once per turn. */
  onWarning?: (text: string) => void;
  /** Told whenever the client learns pi's current session (start, fork, clone, switch): declare it in the ledger. */
  onSession?: (session: RpcSession) => void;
  /** The inventory file agentport's extension writes (AGENTPORT_INVENTORY_FILE), read when the stream has none. */
  inventoryFile?: string;
  /** Between TERM and KILL of pi's process tree (default 2 s). */
  graceMs?: number;
  /** How long close() waits for pi to exit after stdin is closed, before TERM (default 3 s). */
  closeWaitMs?: number;
  /** End turns at `agent_settled` (default: pi >= 0.85; a detector that sees one switches anyway). */
  settled?: boolean;
}
