// Which turn a claude record belongs to (claude 2.1.197, ground truth §2-4):
// the first turn opens with the stream; a later one opens with its own
// `system/init` or, when every turn so far is closed, with an
// `assistant`/`user` record; the n-th `result` closes the n-th turn. And the
// per-turn counts, summed over the results. Pure.
import { addCapped, count } from "../numbers.ts";
import type { ClaudeResult } from "./events.ts";

const PER_TURN_COUNTS = ["num_turns", "duration_ms"] as const;

export class ClaudeTurns {
  private opened = 1;
  private openedByInit = false;
  #results = 0;
  private readonly perTurn = new Map<string, number>(PER_TURN_COUNTS.map((key) => [key, 0]));

  get results(): number {
    return this.#results;
  }

  /** Every turn so far has its result. */
  get closed(): boolean {
    return this.#results === this.opened;
  }

  /** A result closes the open turn and adds its counts; false when no turn is open. */
  result(record: ClaudeResult): boolean {
    if (this.#results >= this.opened) return false;
    this.#results += 1;
    for (const key of PER_TURN_COUNTS) {
      const total = this.perTurn.get(key);
      const value = count(record[key]);
      if (total === undefined) continue;
      if (value === undefined) this.perTurn.delete(key);
      else this.perTurn.set(key, addCapped(total, value));
    }
    return true;
  }

  /** Any other record: whether it belongs to a turn (opening one where it does); false after the last result, when it opens none. */
  place(kind: string, isInit: boolean): boolean {
    if (this.closed) {
      if (kind !== "assistant" && kind !== "user" && !isInit) return false;
      this.opened += 1;
      this.openedByInit = isInit;
    } else if (isInit) {
      if (this.openedByInit) this.opened += 1;
      this.openedByInit = true;
    }
    return true;
  }

  /** The per-turn counts summed over the results (a count one result lacks is dropped); none before a result. */
  counts(): [string, number][] {
    return this.#results > 0 ? [...this.perTurn] : [];
  }
}
