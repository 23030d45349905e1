// The line reducer of claude's and pi's streams: the shared one (json-lines.ts)
// plus what these two streams allow. Blank lines are counted and skipped; a
// line past the framer's big-line size is scanned (scan.ts) with the agent's
// plan; an unterminated last line that is no whole record fails the run only
// if the stream did not end well before it (`badTail`, read at stream end).
import { JsonLineReducer } from "./json-lines.ts";
import type { ProgressSink } from "./progress.ts";
import { parseRecord } from "./record.ts";
import { RecordScanner } from "./scan.ts";
import type { Plan } from "./scan-plan.ts";

export abstract class ScannedLineReducer extends JsonLineReducer {
  protected blankLines = 0;
  protected unterminatedLast = false;
  /** Why the unterminated last line is no record, or null. */
  protected badTail: string | null = null;
  private readonly scanner: RecordScanner;

  protected constructor(
    emit: ProgressSink | undefined,
    protocolName: string,
    plan: Plan,
    /** Whether digested strings are hashed (a loop observer listens). */
    private readonly hashing: boolean,
  ) {
    super(emit, protocolName);
    this.scanner = new RecordScanner(plan);
  }

  override line(text: string): void {
    if (text.trim() === "") {
      this.blankLines += 1;
      return;
    }
    super.line(text);
  }

  bigLine(bytes: Uint8Array): void {
    this.records += 1;
    if (!this.reading()) return;
    this.take(this.scanner.scan(bytes, this.hashing));
  }

  override unterminated(text: string): void {
    if (text.trim() === "" || parseRecord(text).ok) {
      this.unterminatedLast = text.trim() !== "";
      this.line(text);
    } else {
      this.badTail = `the last line has no LF and is not a whole record (${text.length} characters)`;
    }
  }
}
