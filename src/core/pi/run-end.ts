// When pi's run is over: only at its last `agent_end`, since an auto-retry or
// a compaction that retries reopens it; and the counts the summary keeps of
// them. Pure.

export class PiRunEnd {
  /** Between agent_start (or a retry's announcement) and agent_end. */
  private open = false;
  #agentEnds = 0;
  #retries = 0;
  #retryOutcome: "" | "success" | "failure" = "";
  #compactions = 0;

  get agentEnds(): number {
    return this.#agentEnds;
  }

  get retries(): number {
    return this.#retries;
  }

  /** How the last auto-retry ended; "" when there was none. */
  get retryOutcome(): "" | "success" | "failure" {
    return this.#retryOutcome;
  }

  get compactions(): number {
    return this.#compactions;
  }

  /** An agent_end came, and nothing reopened the run since. */
  get over(): boolean {
    return this.agentEnds > 0 && !this.open;
  }

  agentStart(): void {
    this.open = true;
  }

  agentEnd(): void {
    this.#agentEnds += 1;
    this.open = false;
  }

  retryStart(): void {
    this.#retries += 1;
    this.open = true;
  }

  /** A failed retry ends the run (no agent_end follows it). */
  retryEnd(success: boolean): void {
    this.#retryOutcome = success ? "success" : "failure";
    if (!success) this.open = false;
  }

  compactionStart(): void {
    this.#compactions += 1;
    if (this.agentEnds > 0) this.open = true;
  }

  /** willRetry: agent.continue() follows; else the compaction closed nothing new. */
  compactionEnd(willRetry: boolean): void {
    if (!willRetry && this.agentEnds > 0) this.open = false;
  }
}
