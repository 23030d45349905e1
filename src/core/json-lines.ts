// The framer's side shared by the reducers of one-JSON-record-a-line streams
// (codex, gemini, opencode): counting records, parsing each line, the
// protocol-violation failure and the first-failure-wins rule. A subclass
// reads the records (`observe`) and says when a line is still worth reading.
import type { FailureKind } from "./failure.ts";
import { withRunning, type ProgressEvent, type ProgressSink } from "./progress.ts";
import { MAX_REASON_CHARS } from "./reduction.ts";
import { parseRecord, type Json } from "./record.ts";
import { clean } from "./text.ts";
import type { Tokens } from "./verdict.ts";

export abstract class JsonLineReducer {
  protected records = 0;
  protected oversizeLines = 0;
  protected failure: string | null = null;
  protected failureKind: FailureKind = "agent_error";

  /** `protocolName` opens a protocol failure: "codex: json" gives "codex: json protocol violation: …". */
  protected constructor(
    protected readonly emit: ProgressSink | undefined,
    private readonly protocolName: string,
  ) {}

  line(text: string): void {
    this.records += 1;
    if (!this.reading()) return;
    const parsed = parseRecord(text);
    if (!parsed.ok) {
      this.protocol(parsed.why);
      return;
    }
    this.observe(parsed.record);
  }

  oversize(_limit: number): void {
    this.oversizeLines += 1;
    this.send({ kind: "activity" });
  }

  framingError(what: string): void {
    this.protocol(what);
  }

  unterminated(text: string): void {
    if (parseRecord(text).ok) this.line(text);
    else this.protocol(`the last line has no LF and is not a whole record (${text.length} characters)`);
  }

  /** Whether a new line is still read (a failure before the stream's end record stops reading). */
  protected abstract reading(): boolean;

  protected abstract observe(record: Json & { type: string }): void;

  /** The run's tokens so far (the budget guard's, and every event's). */
  abstract liveTokens(): Tokens | null;

  /** The run's cost so far (--max-cost's, and every event's): the stream's, else priced from the tokens, else null. */
  abstract liveCost(): number | null;

  protected send(event: ProgressEvent): void {
    this.emit?.(withRunning(event, this));
  }

  /** The first failure stands (a caller replacing it clears `failure` first). */
  protected fail(reason: string, kind: FailureKind): void {
    if (this.failure !== null) return;
    this.failure = clean(reason, MAX_REASON_CHARS);
    this.failureKind = kind;
  }

  protected protocol(what: string): void {
    this.fail(`${this.protocolName} protocol violation: ${what}`, "protocol");
  }
}
