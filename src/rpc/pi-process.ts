// `pi --mode rpc` as a process: an AgentProcess (../io/agent-process.ts)
// whose stdin takes one JSON line per message and whose stdout is framed into
// lines for the client. It tells once that pi is gone (it exited, or closed
// its stdout), how, after what pi left behind is ended.
import { LineFramer, type LineSink } from "../core/frame.ts";
import { AgentProcess } from "../io/agent-process.ts";
import type { ProcessRef } from "../io/proc.ts";
import type { Json } from "./protocol.ts";

export interface PiGone {
  exitCode: number | null;
  signal: string | null;
  stderrTail: string;
}

export interface PiProcessOptions {
  argv: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  stderrFile: string;
  graceMs?: number;
  maxLineBytes: number;
}

const within = (done: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([done.then(() => true), Bun.sleep(ms).then(() => false)]);

export class PiProcess {
  private readonly agent: AgentProcess;
  private readonly framer: LineFramer;
  private readonly readerDone: Promise<void>;
  private ended: Promise<PiGone> | null = null;

  /** `onChunk` before each chunk of stdout is framed; `onGone` once, when pi is gone and reaped. */
  constructor(
    options: PiProcessOptions,
    sink: LineSink,
    private readonly onChunk: () => void,
    private readonly onGone: (gone: PiGone) => void,
  ) {
    this.agent = AgentProcess.spawn({ ...options, stdin: "pipe" });
    this.framer = new LineFramer(sink, options.maxLineBytes);
    this.readerDone = this.read();
    void this.agent.exited.then(() => this.gone("exit"));
  }

  get pid(): number {
    return this.agent.pid;
  }

  /** pid and start time: what the CPU sampling names it by. */
  get ref(): ProcessRef {
    return this.agent.ref;
  }

  /** Whether pi is known to be gone (nothing more is written to it). */
  get isGone(): boolean {
    return this.ended !== null;
  }

  /** One message as a line on pi's stdin; false when it cannot be written. */
  write(message: Json): boolean {
    return !this.isGone && this.agent.write(`${JSON.stringify(message)}\n`);
  }

  /** End stdin (pi exits at once), wait up to `waitMs`, then the kill rule. Resolves once pi is gone and reaped. */
  async close(waitMs: number): Promise<void> {
    await this.agent.endStdin();
    if (!(await within(this.agent.exited, waitMs))) await this.agent.stop("linger");
    await this.gone("exit");
    await within(this.readerDone, this.agent.grace);
  }

  /** pi exited or closed stdout (idempotent). */
  gone(source: "stdout" | "exit"): Promise<PiGone> {
    this.ended ??= (async () => {
      // Let the other half catch up, bounded: the exit code after EOF, the last lines after an exit.
      if (source === "stdout") await within(this.agent.exited, 1_000);
      else await within(this.readerDone, 250);
      const status = this.agent.status ?? { exitCode: null, signal: null };
      // A pi that closed its stdout and lives on is stopped; whatever it left, in its group or not, goes with it.
      if (this.agent.status === null) await this.agent.stop("linger");
      await this.agent.finish();
      const gone = { ...status, stderrTail: this.agent.stderrTail() };
      this.onGone(gone);
      return gone;
    })();
    return this.ended;
  }

  private async read(): Promise<void> {
    const stdout = this.agent.stdout;
    try {
      for (let chunk = await stdout.read(); chunk !== null; chunk = await stdout.read()) {
        this.onChunk();
        this.framer.push(chunk);
      }
      this.framer.end();
    } catch {
      // A read error is the end of stdout.
    } finally {
      stdout.release();
    }
    void this.gone("stdout");
  }
}
