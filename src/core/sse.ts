// Server-sent events over the bounded line framer: the framer's lines in, each
// event's `data` out as one line to another sink (opencode serve's `GET
// /event` sends one JSON object per `data:` line). Pure. The framer bounds
// each line; an event whose data lines add up past the same bound is dropped
// as oversize. `event:`, `id:`, `retry:` and comments (`:`) are read past.
import type { LineSink } from "./frame.ts";

export class SseData implements LineSink {
  private data: string[] = [];
  private bytes = 0;
  private dropping = false;

  constructor(
    private readonly sink: LineSink,
    private readonly maxEventBytes: number,
  ) {}

  line(text: string): void {
    if (text === "") return this.dispatch();
    if (!text.startsWith("data:")) return;
    const value = text.charCodeAt(5) === 0x20 ? text.slice(6) : text.slice(5);
    if (this.dropping) return;
    this.bytes += value.length + 1;
    if (this.bytes > this.maxEventBytes) {
      this.dropping = true;
      this.data = [];
      return;
    }
    this.data.push(value);
  }

  oversize(): void {
    // A data line past the bound: the event it belongs to is lost whole (said once, at its end).
    this.dropping = true;
    this.data = [];
  }

  framingError(what: string): void {
    this.sink.framingError(what);
  }

  unterminated(text: string): void {
    // A stream cut inside an event: what arrived whole is still delivered.
    this.line(text);
    this.dispatch();
  }

  /** The stream ended: an event without its blank line is delivered. */
  end(): void {
    this.dispatch();
  }

  private dispatch(): void {
    if (this.dropping) this.sink.oversize(this.maxEventBytes);
    else if (this.data.length > 0) this.sink.line(this.data.join("\n"));
    this.data = [];
    this.bytes = 0;
    this.dropping = false;
  }
}
