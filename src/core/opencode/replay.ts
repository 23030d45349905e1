// Replay of an opencode stream of either kind: `run --format json` records
// (`{type, timestamp, sessionID, part}`) or the serve events a `--serve` run
// keeps (`{id: "evt_…", type, properties}`). The first record says which
// reducer reads the stream; a stream whose first line is not a record is the
// run reducer's to judge. Pure.
import type { LineSink } from "../frame.ts";
import type { ProgressSink } from "../progress.ts";
import type { Reducer, Reduction } from "../reduction.ts";
import type { Tokens } from "../verdict.ts";
import { OpencodeReducer } from "./reducer.ts";
import { OpencodeServeReducer } from "./serve-reducer.ts";

/** Whether a line is one of opencode serve's events. */
export function isServeEvent(text: string): boolean {
  try {
    const record: unknown = JSON.parse(text);
    return record !== null && typeof record === "object" && "properties" in record && !("part" in record);
  } catch {
    return false;
  }
}

export class OpencodeReplayReducer implements Reducer {
  private inner: (Reducer & LineSink) | null = null;

  constructor(private readonly options: { cwd?: string; emit?: ProgressSink }) {}

  /** Which stream it was (after the first line). */
  get serve(): boolean {
    return this.inner instanceof OpencodeServeReducer;
  }

  private reader(first?: string): Reducer {
    this.inner ??= first !== undefined && isServeEvent(first) ? new OpencodeServeReducer(this.options) : new OpencodeReducer(this.options);
    return this.inner;
  }

  line(text: string): void {
    this.reader(text).line(text);
  }

  oversize(limit: number): void {
    this.reader().oversize(limit);
  }

  framingError(what: string): void {
    this.reader().framingError(what);
  }

  unterminated(text: string): void {
    this.reader(text).unterminated(text);
  }

  streamEnded(): void {
    this.reader().streamEnded();
  }

  reduction(): Reduction {
    return this.reader().reduction();
  }

  liveTokens(): Tokens | null {
    return this.reader().liveTokens();
  }

  finished(): boolean {
    return this.reader().finished();
  }
}
