// When is an RPC turn over? Pure: fed the turn's events and the answers to
// the barriers it asks for, it says when nothing more will follow.
//
// pi 0.73.1 has no "settled" event: a prompt's stream ends with `agent_end`,
// but one `agent_end` is not always the last. After each `agent_end`, in the
// same synchronous step that writes it (AgentSession._processAgentEvent:
// `_emit(agent_end)`, then `_handleRetryableError` / `_checkCompaction`, whose
// first lines emit before any await), pi may write:
//   - `auto_retry_start` (a retryable error, attempts left): another
//     agent_start … agent_end follows after the delay;
//   - `auto_retry_end{success:false}` (the last attempt failed): nothing follows;
//   - `compaction_start` (context overflow or threshold): `compaction_end`
//     follows; with `willRetry:true` another agent_start … agent_end comes.
// A 400 (not retryable), a success and an abort add nothing.
//
// So the rule, with no sleep: at `agent_end`, send a barrier (a cheap command,
// get_state). pi reads it only after that synchronous step, so its response
// comes after any line pi was going to add to that `agent_end`. When the
// barrier's response arrives and nothing reopened the turn in between
// (`auto_retry_start`, `compaction_start`, `agent_start`), the turn is over.
// `auto_retry_end{success:false}` with no run open (an abort that cancels a
// retry delay) and `compaction_end{willRetry:false}` after an `agent_end` ask
// for a new barrier the same way.
//
// Where the dialect has `agent_settled` (the fake's 0.85, newer pi), the turn
// ends there and agent_end asks for nothing. Seeing one switches a detector
// to that rule for good.
import type { Json } from "../core/record.ts";

export type TurnEndSignal =
  /** Keep reading. */
  | { kind: "none" }
  /** Send a barrier command tagged `generation`; report its response with `barrier(generation)`. */
  | { kind: "barrier"; generation: number }
  /** The turn is over. */
  | { kind: "end" };

const NONE: TurnEndSignal = { kind: "none" };

export class TurnEndDetector {
  private settles: boolean;
  /** Between agent_start and agent_end. */
  private runOpen = false;
  private agentEnds = 0;
  /** An agent_end (or a final retry end) is waiting for its barrier. */
  private candidate = false;
  private compacting = false;
  private generation = 0;
  private over = false;

  constructor(options: { settles?: boolean } = {}) {
    this.settles = options.settles ?? false;
  }

  /** The dialect ends turns with `agent_settled`. */
  get usesSettled(): boolean {
    return this.settles;
  }

  get ended(): boolean {
    return this.over;
  }

  event(event: Json): TurnEndSignal {
    if (this.over) return NONE;
    switch (event.type) {
      case "agent_settled":
        this.settles = true;
        return this.end();
      case "agent_start":
        this.runOpen = true;
        this.reopen();
        return NONE;
      case "agent_end":
        this.runOpen = false;
        this.agentEnds += 1;
        if (this.settles) return NONE;
        return this.ask();
      case "auto_retry_start":
        // Another attempt comes after the delay: its agent_end decides.
        this.reopen();
        return NONE;
      case "auto_retry_end":
        // success:true arrives inside the good attempt, before its agent_end.
        // success:false after the last agent_end, or alone when an abort cancelled a retry delay.
        if (event.success !== true && !this.runOpen && this.agentEnds > 0 && !this.settles) return this.ask();
        return NONE;
      case "compaction_start":
        this.compacting = true;
        this.reopen();
        return NONE;
      case "compaction_end":
        this.compacting = false;
        if (event.willRetry === true) return NONE; // agent.continue() follows
        // Before the prompt's run (pi compacts before sending) it ends nothing.
        if (!this.runOpen && this.agentEnds > 0 && !this.settles) return this.ask();
        return NONE;
      default:
        return NONE;
    }
  }

  /** The response to barrier `generation` arrived: true when the turn is over. */
  barrier(generation: number): boolean {
    if (this.over || generation !== this.generation || !this.candidate || this.compacting || this.runOpen) return false;
    this.over = true;
    return true;
  }

  private ask(): TurnEndSignal {
    this.candidate = true;
    this.generation += 1;
    return { kind: "barrier", generation: this.generation };
  }

  private reopen(): void {
    this.candidate = false;
    this.generation += 1;
  }

  private end(): TurnEndSignal {
    this.over = true;
    return { kind: "end" };
  }
}

/** pi >= 0.85 ends a turn with `agent_settled` (0.73.1 has none anywhere in its dist). */
export function dialectSettles(version: string): boolean {
  const m = /^(\d+)\.(\d+)\./.exec(version);
  if (m === null) return false;
  const major = Number(m[1]);
  const minor = Number(m[2]);
  return major > 0 || minor >= 85;
}
