// The supervisor at work: asked on every chunk of output and every tick, it
// says once when a run must stop. Shared by the phase driver and RPC turns,
// so both are stopped by the same rules (src/core/supervisor.ts).
import type { Reducer } from "../core/reduction.ts";
import type { Clock, Stop, Supervisor } from "../core/supervisor.ts";

// How often the supervisor is asked between chunks: the resolution of timeouts and stalls.
export const TICK_MS = 100;

export const clock = (): Clock => ({ mono: performance.now(), wall: Date.now() });

export interface WatchHooks {
  /** A supervisor warning (the budget in warn mode), said once. */
  onWarning?: (text: string) => void;
  /** The first stop; called once. */
  onStop: (stop: Stop) => void;
  /** Tell the running agent to wrap up (--grace); only a driver whose agent takes a message while it runs gives one. */
  onWrapUp?: (text: string) => void;
  /** Whether the agent's processes did work since the last call (asked only while a tool call is open). */
  busy?: () => boolean;
}

export class Watch {
  private readonly ticker: ReturnType<typeof setInterval>;
  private halted = false;

  constructor(
    private readonly supervisor: Supervisor,
    private readonly reducer: Pick<Reducer, "liveTokens" | "liveCost" | "liveTurns" | "costSilent" | "liveRetryError" | "liveOpenTools">,
    private readonly hooks: WatchHooks,
  ) {
    supervisor.start(clock());
    this.ticker = setInterval(() => this.check(), TICK_MS);
  }

  /** The agent printed something: the stall clock starts again, and the supervisor is asked. */
  activity(): void {
    if (this.halted) return;
    this.supervisor.activity(clock());
    this.check();
  }

  check(): void {
    if (this.halted) return;
    const now = clock();
    this.supervisor.usage(this.reducer.liveTokens(), now);
    this.supervisor.spent(this.reducer.liveCost?.() ?? null, this.reducer.liveTurns?.() ?? null, this.reducer.costSilent?.() ?? null);
    this.supervisor.retrying(this.reducer.liveRetryError?.() ?? null);
    const open = (this.reducer.liveOpenTools?.() ?? 0) > 0;
    this.supervisor.tools(open, open && (this.hooks.busy?.() ?? false), now);
    const warning = this.supervisor.takeWarning();
    if (warning !== null) this.hooks.onWarning?.(warning);
    const stop = this.supervisor.check(now);
    const wrapUp = stop === null && this.hooks.onWrapUp !== undefined ? this.supervisor.takeWrapUp() : null;
    if (wrapUp !== null) this.hooks.onWrapUp?.(wrapUp);
    if (stop !== null) {
      this.halt();
      this.hooks.onStop(stop);
    }
  }

  /** No more asking (the run is over, or being stopped). Idempotent. */
  halt(): void {
    this.halted = true;
    clearInterval(this.ticker);
  }
}
