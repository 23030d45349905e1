// The framer's side shared by the reducers of one-JSON-record-a-line streams
// (every agent's): counting records, parsing each line, the
// protocol-violation failure and the first-failure-wins rule. A subclass
// reads the records (`observe`) and says when a line is still worth reading.
// claude's and pi's streams add blank lines, big lines and a late bad tail
// (scanned-lines.ts).
import { failure, type Failure, type FailureKind } from "./failure.ts";
import { withRunning, type ProgressEvent, type ProgressSink } from "./progress.ts";
import { MAX_REASON_CHARS } from "./reduction.ts";
import { parseRecord, type Json, type Parsed } from "./record.ts";
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
    this.take(parseRecord(text));
  }

  protected take(parsed: Parsed): void {
    if (parsed.ok) this.observe(parsed.record);
    else this.notRecord(parsed.why);
  }

  /** A line that is no JSON record: a protocol violation, unless the stream allows stray lines. */
  protected notRecord(why: string): void {
    this.protocol(why);
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

  /** The failure so far, as the reduction carries it. */
  protected failed(): Failure | null {
    return this.failure === null ? null : failure(this.failureKind, this.failure);
  }

  protected protocol(what: string): void {
    this.fail(`${this.protocolName} protocol violation: ${what}`, "protocol");
  }
}
