// One RPC turn: its events through a PiReducer, its end by the turn-end rule
// (./turn-end.ts), supervised by the same core Supervisor as a phase (timeout,
// stall, budget, loop through ./../io/watch.ts), and decided by the same judge.
// A stop asks the client to abort (dialogs cancelled first); when pi does not
// end the turn within the command timeout the client ends pi (its whole tree).
import { envelopeFromTool, type EnvelopeCheck } from "../core/envelope.ts";
import type { StopCause } from "../core/failure.ts";
import { judge } from "../core/judge.ts";
import type { ProcessOutcome } from "../core/outcome.ts";
import { PiReducer, type Inventory } from "../core/pi/reducer.ts";
import { unmetRequirement } from "../core/pi/requirements.ts";
import { withRunning, type ProgressEvent, type ProgressSink } from "../core/progress.ts";
import { MAX_REFUSED, MAX_SUBJECT_CHARS } from "../core/reduction.ts";
import { Supervisor, type SupervisorOptions } from "../core/supervisor.ts";
import { clean } from "../core/text.ts";
import type { Refused, Verdict } from "../core/verdict.ts";
import { Watch } from "../io/watch.ts";
import type { Json, PromptOptions } from "./protocol.ts";
import { TurnEndDetector, type TurnEndSignal } from "./turn-end.ts";

export interface TurnSettings {
  index: number;
  cwd: string;
  envelopeTool: string;
  settles: boolean;
  supervision: SupervisorOptions;
  onProgress?: ProgressSink;
  onWarning?: (text: string) => void;
  /** Whether pi's process tree did work since the last look (asked while a tool call is open). */
  busy?: () => boolean;
}

export interface TurnHooks {
  /** Cancel the turn's dialogs, send abort; resolves with abort's answer. */
  abort: (dialogIds: string[]) => Promise<void>;
  /** Send a message into the running turn (`steer`); resolves with pi's answer. */
  steer: (message: string) => Promise<void>;
}

export interface TurnJudgement {
  envelope: ((value: unknown) => EnvelopeCheck) | null;
  requireExt: string[];
  route: string | null;
  /** The session's inventory when this turn's stream has none (an earlier turn's, or the extension's file). */
  inventory: Inventory | null;
  sessionId: string | null;
}

export class RpcTurn {
  readonly reducer: PiReducer;
  readonly started = performance.now();
  readonly done = Promise.withResolvers<void>();
  private readonly detector: TurnEndDetector;
  private readonly supervisor: Supervisor;
  private readonly watch: Watch;
  private readonly refused: Refused[] = [];
  private refusedCount = 0;
  private readonly dialogIds: string[] = [];
  private sawStart = false;
  private stop: { cause: StopCause; reason: string; finished: boolean } | null = null;
  /** pi did not end the turn after the abort: the client killed its tree. */
  private killed = false;
  /** pi ended mid-turn: how. */
  private gone: (Pick<ProcessOutcome, "exitCode" | "signal" | "stderrTail"> & { closing: boolean }) | null = null;

  constructor(
    private readonly settings: TurnSettings,
    private readonly hooks: TurnHooks,
    /** What the prompt asked for (the envelope, the requirements), kept for a judge after pi died. */
    readonly options: PromptOptions = {},
  ) {
    this.supervisor = new Supervisor(settings.supervision);
    this.reducer = new PiReducer({
      cwd: settings.cwd,
      expectHeader: false,
      emit: settings.onProgress,
      envelopeTool: settings.envelopeTool,
      loop: this.supervisor.loop,
    });
    this.detector = new TurnEndDetector({ settles: settings.settles });
    this.watch = new Watch(this.supervisor, this.reducer, {
      onWarning: settings.onWarning,
      busy: settings.busy,
      onStop: (s) => void this.stopWith(s.kind, `${s.reason}; the turn was aborted`)?.catch(() => {}),
      // --grace: pi queues the wrap-up and hands it to the model after its current step.
      onWrapUp: (text) =>
        void hooks.steer(text).catch((error: unknown) => {
          this.supervisor.wrapUpLost();
          settings.onWarning?.(`pi (rpc): the wrap-up was not told: ${(error as Error).message}`);
        }),
    });
    // Awaited by prompt(); a rejection before that must not go unhandled.
    this.done.promise.catch(() => {});
  }

  get index(): number {
    return this.settings.index;
  }

  get usesSettled(): boolean {
    return this.detector.usesSettled;
  }

  get stopping(): boolean {
    return this.stop !== null;
  }

  /** stdout moved (any bytes, even between lines): the stall clock starts again. */
  activity(): void {
    this.watch.activity();
  }

  /** One event line of the turn: reduced, supervised, and checked for the turn's end. */
  event(text: string, message: Json | null): TurnEndSignal {
    this.reducer.line(text);
    this.watch.check();
    if (message === null) return { kind: "none" };
    if (message.type === "agent_start" && !this.sawStart) {
      this.sawStart = true;
      this.tell({ kind: "started" });
    }
    return this.detector.event(message);
  }

  /** The barrier's answer arrived: true when the turn is over. */
  barrier(generation: number): boolean {
    return this.detector.barrier(generation);
  }

  /** A dialog pi asked for during the turn, already refused by the client. */
  dialog(id: unknown, refused: Refused): void {
    this.refusedCount += 1;
    if (this.refused.length < MAX_REFUSED) this.refused.push(refused);
    if (typeof id === "string" && this.dialogIds.length < MAX_REFUSED) this.dialogIds.push(id);
    this.tell({ kind: "activity" });
  }

  /** An event of the turn's own, with the running totals the reducer's events carry. */
  private tell(event: ProgressEvent): void {
    this.settings.onProgress?.(withRunning(event, this.reducer));
  }

  /** The caller's abort (an interrupt); the first stop sticks, and a second abort is sent anyway. */
  interrupt(): Promise<void> {
    return this.stopWith("interrupt", "aborted: the turn was aborted on request") ?? this.hooks.abort(this.dialogIds);
  }

  /** pi did not end the turn after the abort within the command timeout. */
  markKilled(): void {
    this.killed = true;
  }

  /** The turn is over (its end, a kill): no more supervision. */
  close(): void {
    this.watch.halt();
    this.done.resolve();
  }

  /** pi's process ended inside the turn; the stream is over. */
  processGone(how: { exitCode: number | null; signal: string | null; stderrTail: string; closing: boolean }): void {
    this.watch.halt();
    this.gone = how;
    this.reducer.streamEnded();
  }

  /** The one judge, as for a phase. */
  judge(j: TurnJudgement): Verdict {
    const reading = this.reducer.reduction();
    const inventory = reading.inventory ?? j.inventory;
    const facts: Record<string, string | number | boolean> = { ...this.supervisor.facts(), rpc_turn: this.index };
    if (this.refusedCount > 0) facts.dialogs_refused = this.refusedCount;
    return judge({
      agent: "pi",
      reduction: reading,
      proc: this.outcome(),
      sessionId: j.sessionId,
      requirement: unmetRequirement({ ...reading, inventory }, { requireExt: j.requireExt, route: j.route }),
      envelope: {
        check: j.envelope,
        delivered: envelopeFromTool(this.settings.envelopeTool, reading.envelope, reading.envelopeError),
        nudges: 0,
      },
      facts,
      refused: this.refused,
    }).verdict;
  }

  private outcome(): ProcessOutcome {
    const stop = this.stop;
    const gone = this.gone;
    const stopReason =
      stop === null
        ? undefined
        : this.killed
          ? `${stop.reason}; pi did not end the turn after the abort, and its process tree was killed`
          : stop.reason;
    if (gone !== null && stop === null) {
      return { exitCode: gone.exitCode, signal: gone.signal, stderrTail: gone.stderrTail, stoppedBy: gone.closing ? "internal" : null };
    }
    return {
      exitCode: null,
      signal: null,
      stderrTail: gone?.stderrTail ?? "",
      stoppedBy: stop?.cause ?? null,
      stopReason,
      finishedAtStop: stop?.finished ?? false,
    };
  }

  private stopWith(cause: StopCause, reason: string): Promise<void> | null {
    if (this.stop !== null) return null;
    // The run's agent_end may have come before the stop (a turn that waits for agent_settled).
    this.stop = { cause, reason: clean(reason, MAX_SUBJECT_CHARS * 3), finished: this.reducer.finished() };
    this.watch.halt();
    return this.hooks.abort(this.dialogIds);
  }
}
