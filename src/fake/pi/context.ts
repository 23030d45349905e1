// What a run is given: where its events go, its session, model, tools, retry settings, and in RPC the dialogs and the abort.
import type { SessionStore } from "./session-store.ts";

/** RPC only: what an abort command does to a running prompt. Sleeps, hangs, retry delays and slow replies end early. */
export class AbortState {
  requested = false;
  private wakers = new Set<() => void>();

  request(): void {
    this.requested = true;
    for (const wake of this.wakers) wake();
    this.wakers.clear();
  }

  reset(): void {
    this.requested = false;
  }

  /** Sleep `ms` (Infinity: until an abort); true when an abort ended it (or had already come). */
  pause(ms: number): Promise<boolean> {
    if (this.requested) return Promise.resolve(true);
    return new Promise((done) => {
      let timer: Timer | undefined;
      const wake = () => {
        if (timer !== undefined) clearTimeout(timer);
        done(true);
      };
      this.wakers.add(wake);
      if (Number.isFinite(ms))
        timer = setTimeout(() => {
          this.wakers.delete(wake);
          done(false);
        }, ms);
    });
  }
}

/** RPC only: the extension UI sub-protocol, as pi's createDialogPromise speaks it. */
export interface DialogUi {
  /** Resolves true only when the client answered `confirmed: true`. */
  confirm(title: string, message: string, timeout?: number): Promise<boolean>;
}

export interface RunContext {
  /** Events go to stdout (json and RPC modes). */
  json: boolean;
  session: SessionStore;
  provider: string;
  model: string;
  enabledTools: Set<string>;
  retry: { enabled: boolean; maxRetries: number; baseDelayMs: number };
  /** RPC: dialogs reach the client; without it (json, -p) ctx.hasUI is false and a confirm is refused at once. */
  ui?: DialogUi;
  /** RPC: the abort command's flag. */
  abort?: AbortState;
  /** RPC: messages `steer` queued, given to the model before its next call (pi's steering queue, one at a time). */
  steering?: string[];
}
