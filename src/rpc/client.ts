// A live pi session over `pi --mode rpc`: one process, several turns, clones.
//
// The process runs with a phase's flags (piArgv, mode "rpc") in its own
// process group; stderr goes to a file. Commands are JSON lines with their own
// id and are sent one at a time: pi does not serialize them, so the client
// waits for each response before sending the next. A response without an id
// (unknown command, unparseable line) fails the command in flight. Every other
// line goes through the bounded LineFramer to the current turn's PiReducer and
// the progress sink, and a turn is judged exactly like a phase (judgePi, then
// decide). Dialogs are refused at once and recorded; a dead child fails every
// pending call at once with the tail of its stderr. Declaring sessions in the
// ledger is the caller's job: `onSession` and the return values say which
// session pi is in (a clone's id is only known after the clone).
//
// When a turn is over: see ./turn-end.ts.
import { existsSync, readFileSync } from "node:fs";
import { piArgv, route as routeOf, type PiArgvRequest } from "../agents/pi-argv.ts";
import type { Env } from "../core/env.ts";
import type { EnvelopeCheck } from "../core/envelope.ts";
import { LineFramer, type LineSink } from "../core/frame.ts";
import { judgePi } from "../core/judge.ts";
import { decide, type ProcessOutcome } from "../core/outcome.ts";
import { BudgetGuard, type BudgetOptions } from "../core/budget.ts";
import { DEFAULT_LOOP_REPEAT, LoopDetector } from "../core/loop-detector.ts";
import { ENVELOPE_TOOL, PiReducer, readInventory, type Inventory } from "../core/pi/reducer.ts";
import type { ProgressSink } from "../core/progress.ts";
import { MAX_REFUSED, MAX_SUBJECT_CHARS } from "../core/reduction.ts";
import { clean } from "../core/text.ts";
import { exitCodeFor, type Refused, type Verdict } from "../core/verdict.ts";
import { reapAgent, signalGroup, spawnAgent } from "../io/spawn.ts";
import type { ProcessRef } from "../io/proc.ts";
import { StderrLog } from "../io/stderr-log.ts";
import { dialectSettles, TurnEndDetector } from "./turn-end.ts";
import { usageFromStats, usageSince, ZERO_USAGE, type Usage } from "./usage.ts";

type Json = Record<string, unknown>;

/** Extension UI methods that block pi until answered. The others (notify, setStatus, setWidget, …) are fire-and-forget. */
export const DIALOG_METHODS = new Set(["select", "confirm", "input", "editor"]);

const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
const DEFAULT_GRACE_MS = 2_000;
/** After stdin is closed pi exits within ~15 ms (§4); extensions' session_shutdown may take a little longer. */
const DEFAULT_CLOSE_WAIT_MS = 3_000;

/** The same pi flags as a phase (`PiArgvRequest` less the mode), plus how to run the session. */
export interface PiRpcStartOptions extends Omit<PiArgvRequest, "mode"> {
  cwd: string;
  env: Env;
  stderrFile: string;
  /** Per command (default 30 s); also how long an abort may take before the group is killed. */
  commandTimeoutMs?: number;
  /** Per turn, from the prompt: then the turn is aborted and judged "timeout". */
  turnTimeoutMs?: number;
  /** No stdout for this long during a turn: it is aborted and judged "stalled". */
  stallMs?: number;
  /** Loop detection per turn (the same tool call K times, a ping-pong, the same text): aborted, "looping". Default 5; null turns it off. */
  loopRepeat?: number | null;
  /** A token budget per turn (weighted as for a phase): enforce aborts the turn, "over_budget". */
  budget?: BudgetOptions | null;
  maxLineBytes: number;
  onProgress?: ProgressSink;
  /** Told whenever the client learns pi's current session (start, fork, clone, switch): declare it in the ledger. */
  onSession?: (session: RpcSession) => void;
  /** The inventory file agentport's extension writes (AGENTPORT_INVENTORY_FILE), read when the stream has none. */
  inventoryFile?: string;
  /** Between TERM and KILL of the group (default 2 s). */
  graceMs?: number;
  /** How long close() waits for pi to exit after stdin is closed, before TERM (default 3 s). */
  closeWaitMs?: number;
  /** End turns at `agent_settled` (default: pi >= 0.85; a detector that sees one switches anyway). */
  settled?: boolean;
}

export interface RpcSession {
  sessionId: string;
  sessionFile: string | null;
  reason: "start" | "fork" | "clone" | "switch";
  /** The session this one was cloned from (clone), else null. */
  parentId: string | null;
  /** The clone's or fork's source file, else null. */
  parentFile: string | null;
}

export interface RpcState {
  sessionId: string | null;
  sessionFile: string | null;
  /** `provider/id`. */
  model: string | null;
  thinkingLevel: string | null;
  isStreaming: boolean;
  messageCount: number | null;
  data: Json;
}

export interface PromptOptions {
  /** The envelope validator when an envelope is expected. */
  envelope?: ((value: unknown) => EnvelopeCheck) | null;
  requireExt?: string[];
  /** The route the observed model must match; default: the start model, or the last setModel. */
  route?: string | null;
}

export interface TurnResult {
  verdict: Verdict;
  exitCode: number;
  /** This turn's own tokens and cost: get_session_stats after minus before. */
  own: Usage;
  /** The current session's own usage so far: now minus when the client entered it (a clone: at clone). */
  session: Usage;
  sessionId: string | null;
  sessionFile: string | null;
  durationMs: number;
}

export interface CloneResult {
  sessionId: string;
  sessionFile: string | null;
  parentId: string | null;
  parentFile: string | null;
  /** Cumulative stats of the clone right after cloning (its copied history). */
  atClone: Usage;
}

export interface SessionUsage {
  sessionId: string | null;
  /** get_session_stats now (cloned history included). */
  total: Usage;
  /** When the client entered the session. */
  baseline: Usage;
  /** total minus baseline. */
  own: Usage;
}

export type PiRpcErrorCode = "exited" | "closed" | "command_failed" | "command_timeout" | "busy" | "cancelled";

export class PiRpcError extends Error {
  constructor(
    message: string,
    readonly code: PiRpcErrorCode,
    readonly details: {
      command?: string;
      response?: Json;
      exitCode?: number | null;
      signal?: string | null;
      stderrTail?: string;
      /** A turn that pi did not finish: its verdict (status failed or crashed). */
      verdict?: Verdict;
    } = {},
  ) {
    super(message);
  }
}

interface Pending {
  id: string;
  type: string;
  fields: Json;
  timeoutMs: number;
  resolve: (response: Json) => void;
  reject: (error: Error) => void;
  timer?: Timer;
}

interface Turn {
  index: number;
  reducer: PiReducer;
  detector: TurnEndDetector;
  refused: Refused[];
  refusedCount: number;
  dialogIds: string[];
  started: number;
  stop: TurnStop | null;
  /** The supervisor's reason, for a loop or a budget stop. */
  stopReason: string | null;
  loop: LoopDetector | null;
  budget: BudgetGuard | null;
  /** pi did not end the turn after the abort: the group was killed. */
  killed: boolean;
  sawStart: boolean;
  timers: Timer[];
  stallTimer: Timer | null;
  done: PromiseWithResolvers<void>;
}

type TurnStop = "abort" | "timeout" | "stall" | "loop" | "budget";
const STOP_STATUS = { timeout: "timeout", stall: "stalled", loop: "looping", budget: "over_budget" } as const;

const sleep = (ms: number) => new Promise<false>((resolve) => setTimeout(() => resolve(false), ms));
const lastLines = (text: string): string => clean(text.split("\n").filter((l) => l.trim()).slice(-3).join(" | "), 240);
const str = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null);

export class PiRpcClient implements AsyncDisposable {
  readonly pid: number;
  readonly stderrFile: string;
  /** pi's current session. */
  sessionId: string | null = null;
  sessionFile: string | null = null;
  /** Dialogs refused outside any turn (an extension asking at session start). */
  readonly refusedOutside: Refused[] = [];

  private readonly child: Bun.Subprocess<"pipe", "pipe", "pipe">;
  /** pid and start time: what the keeper and the final reap name it by. */
  private readonly agent: ProcessRef;
  private readonly stderrLog: StderrLog;
  private readonly stderrDone: Promise<void>;
  private readonly opts: PiRpcStartOptions;
  private readonly commandTimeoutMs: number;
  private readonly framer: LineFramer;
  private route: string | null;
  private settles: boolean;
  private seq = 0;
  private queue: Pending[] = [];
  private inFlight: Pending | null = null;
  private turn: Turn | null = null;
  private turns = 0;
  /** A prompt() is between its call and its turn's end. */
  private prompting = false;
  private inventory: Inventory | null = null;
  private baselines = new Map<string, Usage>();
  private dead: PiRpcError | null = null;
  private closing: Promise<void> | null = null;
  private gone = false;
  private goneHandled: Promise<void> | null = null;
  private readerDone: Promise<void>;

  private constructor(child: Bun.Subprocess<"pipe", "pipe", "pipe">, agent: ProcessRef, opts: PiRpcStartOptions) {
    this.child = child;
    this.agent = agent;
    this.pid = child.pid;
    this.stderrLog = new StderrLog(opts.stderrFile);
    this.stderrDone = this.stderrLog.drain(child.stderr);
    this.opts = opts;
    this.stderrFile = opts.stderrFile;
    this.commandTimeoutMs = opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS;
    this.route = opts.model ? routeOf(opts.model, opts.gateway, opts.direct) : null;
    this.settles = opts.settled ?? dialectSettles(opts.caps.version);
    const sink: LineSink = {
      line: (text) => this.line(text),
      oversize: (limit) => this.turn?.reducer.oversize(limit),
      framingError: (what) => this.turn?.reducer.framingError(what),
    };
    this.framer = new LineFramer(sink, opts.maxLineBytes);
    this.readerDone = this.read();
    void child.exited.then(() => this.childGone("exit"));
  }

  /** Start `pi --mode rpc`, learn its session (get_state) and the baseline of its stats. */
  static async start(opts: PiRpcStartOptions): Promise<PiRpcClient> {
    const argv = piArgv({ ...opts, mode: "rpc" });
    // Its own process group, watched by the keeper (it dies with agentport), killed whole on close.
    const { child, agent } = spawnAgent(argv, { cwd: opts.cwd, env: opts.env, stdin: "pipe" });
    const client = new PiRpcClient(child, agent, opts);
    try {
      const state = await client.state();
      if (state.sessionId !== null) {
        client.baselines.set(state.sessionId, await client.totals());
        client.announce({
          sessionId: state.sessionId,
          sessionFile: state.sessionFile,
          reason: opts.fork !== undefined ? "fork" : "start",
          parentId: null,
          parentFile: opts.fork ?? null,
        });
      }
    } catch (error) {
      await client.close();
      throw error;
    }
    return client;
  }

  // -- the commands ---------------------------------------------------------------

  /** One whole turn: the prompt, its events until the end signal, judged like a phase. */
  async prompt(message: string, options: PromptOptions = {}): Promise<TurnResult> {
    this.usable();
    if (this.turn !== null || this.prompting) throw new PiRpcError("pi (rpc): a turn is already running", "busy");
    this.prompting = true;
    try {
      return await this.runTurn(message, options);
    } finally {
      this.prompting = false;
    }
  }

  private async runTurn(message: string, options: PromptOptions): Promise<TurnResult> {
    const before = await this.totals();
    const turn = this.openTurn();
    try {
      await this.command("prompt", { message });
    } catch (error) {
      this.closeTurn(turn);
      throw error;
    }
    await turn.done.promise;
    const verdict = this.judge(turn, options);
    let own: Usage = { tokens: null, costMicroUsd: null };
    let session: Usage = { tokens: null, costMicroUsd: null };
    if (this.dead === null && this.closing === null) {
      try {
        const after = await this.totals();
        own = usageSince(after, before);
        session = usageSince(after, this.baseline());
      } catch {
        // pi died or closed right after the turn: the verdict stands, the stats are unknown.
      }
    }
    return {
      verdict,
      exitCode: exitCodeFor(verdict),
      own,
      session,
      sessionId: this.sessionId,
      sessionFile: this.sessionFile,
      durationMs: Math.round(performance.now() - turn.started),
    };
  }

  /** get_state; the client follows pi's current session from it. */
  async state(): Promise<RpcState> {
    const response = await this.command("get_state");
    const data = (response.data ?? {}) as Json;
    const model = data.model !== null && typeof data.model === "object" ? (data.model as Json) : {};
    const state: RpcState = {
      sessionId: str(data.sessionId),
      sessionFile: str(data.sessionFile),
      model: str(model.provider) && str(model.id) ? `${String(model.provider)}/${String(model.id)}` : null,
      thinkingLevel: str(data.thinkingLevel),
      isStreaming: data.isStreaming === true,
      messageCount: typeof data.messageCount === "number" ? data.messageCount : null,
      data,
    };
    this.sessionId = state.sessionId;
    this.sessionFile = state.sessionFile;
    return state;
  }

  /** get_session_stats, as pi reports it (cumulative, a clone's copied history included). */
  async stats(): Promise<Json> {
    const response = await this.command("get_session_stats");
    return (response.data ?? {}) as Json;
  }

  /** The current session's usage: total, the baseline when the client entered it, and the difference. */
  async usage(): Promise<SessionUsage> {
    const total = await this.totals();
    const baseline = this.baseline();
    return { sessionId: this.sessionId, total, baseline, own: usageSince(total, baseline) };
  }

  /** clone, then get_state for the new session; the clone's stats at clone time become its baseline. */
  async clone(): Promise<CloneResult> {
    this.idle("clone");
    const parentId = this.sessionId;
    const parentFile = this.sessionFile;
    const response = await this.command("clone");
    if ((response.data as Json | undefined)?.cancelled === true) throw new PiRpcError("pi (rpc): clone was cancelled by an extension", "cancelled");
    const state = await this.state();
    if (state.sessionId === null) throw new PiRpcError("pi (rpc): get_state after clone names no session", "command_failed");
    const atClone = await this.totals();
    this.baselines.set(state.sessionId, atClone);
    this.announce({ sessionId: state.sessionId, sessionFile: state.sessionFile, reason: "clone", parentId, parentFile });
    return { sessionId: state.sessionId, sessionFile: state.sessionFile, parentId, parentFile, atClone };
  }

  /** switch_session to a session file (back to the prime between clones). */
  async switchSession(sessionFile: string): Promise<RpcState> {
    this.idle("switch_session");
    const response = await this.command("switch_session", { sessionPath: sessionFile });
    if ((response.data as Json | undefined)?.cancelled === true) throw new PiRpcError("pi (rpc): switch_session was cancelled by an extension", "cancelled");
    const state = await this.state();
    if (state.sessionId !== null) {
      if (!this.baselines.has(state.sessionId)) this.baselines.set(state.sessionId, await this.totals());
      this.announce({ sessionId: state.sessionId, sessionFile: state.sessionFile, reason: "switch", parentId: null, parentFile: null });
    }
    return state;
  }

  /** set_model; later turns are judged against `provider/modelId`. Returns pi's model object. */
  async setModel(provider: string, modelId: string): Promise<Json> {
    const response = await this.command("set_model", { provider, modelId });
    this.route = `${provider}/${modelId}`;
    return (response.data ?? {}) as Json;
  }

  /** set_thinking_level (pi accepts any value; an invalid one becomes "off"). */
  async setThinking(level: string): Promise<void> {
    await this.command("set_thinking_level", { level });
  }

  /** abort the running turn (its verdict says "aborted"); pending dialogs are cancelled first (abort does not release them). */
  async abort(): Promise<void> {
    const turn = this.turn;
    if (turn !== null) {
      turn.stop ??= "abort";
      this.cancelDialogs(turn);
    }
    await this.command("abort");
  }

  /** Any other command (get_messages, get_available_models, …), through the same queue: its whole response, or a rejection. */
  async request(type: string, fields: Json = {}): Promise<Json> {
    return await this.command(type, fields);
  }

  /** End stdin (pi exits at once), wait briefly, then TERM and KILL the group. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // -- the command queue ------------------------------------------------------------

  private command(type: string, fields: Json = {}, timeoutMs = this.commandTimeoutMs): Promise<Json> {
    if (this.dead !== null) return Promise.reject(this.dead);
    if (this.closing !== null) return Promise.reject(new PiRpcError(`pi (rpc): closed; cannot send ${type}`, "closed", { command: type }));
    return new Promise<Json>((resolve, reject) => {
      this.seq += 1;
      this.queue.push({ id: `ap-${this.seq}`, type, fields, timeoutMs, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    if (this.inFlight !== null || this.dead !== null) return;
    const next = this.queue.shift();
    if (next === undefined) return;
    this.inFlight = next;
    next.timer = setTimeout(() => {
      if (this.inFlight !== next) return;
      this.inFlight = null;
      next.reject(new PiRpcError(`pi (rpc): no response to ${next.type} within ${next.timeoutMs / 1000} s`, "command_timeout", { command: next.type }));
      this.pump();
    }, next.timeoutMs);
    if (!this.write({ id: next.id, type: next.type, ...next.fields })) {
      // stdin is gone: the exit handler fails everything with stderr's tail.
      void this.childGone("stdout");
    }
  }

  private response(message: Json): void {
    const pending = this.inFlight;
    // An id-less response (unknown command, parse error) answers whatever is in flight.
    if (pending === null || (message.id !== undefined && message.id !== pending.id)) return;
    clearTimeout(pending.timer);
    this.inFlight = null;
    if (message.success === true) pending.resolve(message);
    else {
      const why = clean(message.error, 400) || "no error given";
      pending.reject(new PiRpcError(`pi (rpc) refused ${pending.type}: ${why}`, "command_failed", { command: pending.type, response: message }));
    }
    this.pump();
  }

  private write(message: Json): boolean {
    if (this.dead !== null || this.gone) return false;
    try {
      const sink = this.child.stdin;
      sink.write(`${JSON.stringify(message)}\n`);
      const flushed = sink.flush();
      if (flushed instanceof Promise) flushed.catch(() => {});
      return true;
    } catch {
      return false;
    }
  }

  // -- stdout ---------------------------------------------------------------------------

  private async read(): Promise<void> {
    const reader = this.child.stdout.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        this.activity();
        this.framer.push(value);
      }
      this.framer.end();
    } catch {
      // A read error is the end of stdout.
    } finally {
      reader.releaseLock();
    }
    void this.childGone("stdout");
  }

  private line(text: string): void {
    let message: Json | null = null;
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) message = parsed as Json;
    } catch {
      // Not JSON: the turn's reducer names the protocol violation.
    }
    if (message?.type === "response") {
      this.response(message);
      return;
    }
    if (message?.type === "extension_ui_request") {
      this.uiRequest(message);
      return;
    }
    const turn = this.turn;
    if (turn === null) {
      // Between turns: thinking_level_changed after a command, a late agent_settled.
      if (message?.type === "agent_settled") this.settles = true;
      return;
    }
    turn.reducer.line(text);
    this.supervise(turn);
    if (message === null) return;
    if (message.type === "agent_start" && !turn.sawStart) {
      turn.sawStart = true;
      this.opts.onProgress?.({ kind: "started" });
    }
    const signal = turn.detector.event(message);
    if (signal.kind === "end") this.closeTurn(turn);
    else if (signal.kind === "barrier") {
      const generation = signal.generation;
      this.command("get_state").then(
        () => {
          if (this.turn === turn && turn.detector.barrier(generation)) this.closeTurn(turn);
        },
        () => {
          // The barrier failed (pi died, or no answer): the exit handler, the turn timeout or the stall timer decide.
        },
      );
    }
  }

  /** Dialogs are refused at once (nobody is there to answer, and pi would wait forever); the rest is fire-and-forget. */
  private uiRequest(message: Json): void {
    const method = typeof message.method === "string" ? message.method : "";
    if (!DIALOG_METHODS.has(method)) return;
    const id = message.id;
    this.write({ type: "extension_ui_response", id, cancelled: true });
    const subject = clean(message.title, MAX_SUBJECT_CHARS) || clean(message.message, MAX_SUBJECT_CHARS) || method;
    const refused: Refused = { kind: "dialog", subject };
    const turn = this.turn;
    if (turn === null) {
      if (this.refusedOutside.length < MAX_REFUSED) this.refusedOutside.push(refused);
      return;
    }
    turn.refusedCount += 1;
    if (turn.refused.length < MAX_REFUSED) turn.refused.push(refused);
    if (typeof id === "string" && turn.dialogIds.length < MAX_REFUSED) turn.dialogIds.push(id);
    this.opts.onProgress?.({ kind: "activity" });
  }

  /** Before an abort: cancel every dialog of the turn again (pi ignores ids it no longer waits on). */
  private cancelDialogs(turn: Turn): void {
    for (const id of turn.dialogIds) this.write({ type: "extension_ui_response", id, cancelled: true });
  }

  // -- turns --------------------------------------------------------------------------

  private openTurn(): Turn {
    this.turns += 1;
    const repeat = this.opts.loopRepeat === undefined ? DEFAULT_LOOP_REPEAT : this.opts.loopRepeat;
    const loop = repeat === null ? null : new LoopDetector({ repeat });
    const turn: Turn = {
      index: this.turns,
      reducer: new PiReducer({ cwd: this.opts.cwd, expectHeader: false, emit: this.opts.onProgress, envelopeTool: this.opts.envelopeTool ?? ENVELOPE_TOOL, loop: loop ?? undefined }),
      loop,
      budget: this.opts.budget ? new BudgetGuard(this.opts.budget) : null,
      stopReason: null,
      detector: new TurnEndDetector({ settles: this.settles }),
      refused: [],
      refusedCount: 0,
      dialogIds: [],
      started: performance.now(),
      stop: null,
      killed: false,
      sawStart: false,
      timers: [],
      stallTimer: null,
      done: Promise.withResolvers<void>(),
    };
    // Awaited by prompt(); a rejection before that must not go unhandled.
    turn.done.promise.catch(() => {});
    const limit = this.opts.turnTimeoutMs;
    if (limit !== undefined) turn.timers.push(setTimeout(() => this.stopTurn(turn, "timeout"), limit));
    this.turn = turn;
    this.activity();
    return turn;
  }

  private closeTurn(turn: Turn): void {
    for (const timer of turn.timers) clearTimeout(timer);
    if (turn.stallTimer !== null) clearTimeout(turn.stallTimer);
    turn.stallTimer = null;
    if (turn.detector.usesSettled) this.settles = true;
    if (this.turn === turn) this.turn = null;
    turn.done.resolve();
  }

  /** stdout moved: the stall timer starts again. */
  private activity(): void {
    const turn = this.turn;
    const stallMs = this.opts.stallMs;
    if (turn === null || stallMs === undefined || turn.stop !== null) return;
    if (turn.stallTimer !== null) clearTimeout(turn.stallTimer);
    turn.stallTimer = setTimeout(() => this.stopTurn(turn, "stall"), stallMs);
  }

  /** Loop and budget, after every line of the turn: the same rules as a phase's supervisor. */
  private supervise(turn: Turn): void {
    if (turn.stop !== null) return;
    const loop = turn.loop?.verdict() ?? null;
    if (loop !== null) {
      turn.stopReason = `looping: ${loop.reason}`;
      this.stopTurn(turn, "loop");
      return;
    }
    if (turn.budget === null) return;
    const tokens = turn.reducer.liveTokens();
    const now = performance.now();
    const event = (tokens === null ? null : turn.budget.sample(tokens, now)) ?? turn.budget.tick(now);
    if (event?.kind === "stop" || turn.budget.state().stopped) {
      const state = turn.budget.state();
      turn.stopReason = `over budget: ${state.weighted} weighted tokens of ${state.max} (enforced after the grace)`;
      this.stopTurn(turn, "budget");
    }
  }

  /** A supervision stop: cancel dialogs, abort; if pi does not end the turn within the command timeout, kill the group. */
  private stopTurn(turn: Turn, why: Exclude<TurnStop, "abort">): void {
    if (this.turn !== turn || (turn.stop !== null && turn.stop !== "abort")) return;
    turn.stop = why;
    if (turn.stallTimer !== null) clearTimeout(turn.stallTimer);
    turn.stallTimer = null;
    this.cancelDialogs(turn);
    this.command("abort").catch(() => {});
    turn.timers.push(
      setTimeout(() => {
        if (this.turn !== turn) return;
        turn.killed = true;
        this.closeTurn(turn);
        void this.close();
      }, this.commandTimeoutMs),
    );
  }

  private judge(turn: Turn, options: PromptOptions): Verdict {
    const reading = turn.reducer.reduction();
    reading.sessionId = this.sessionId;
    if (reading.inventory !== null) this.inventory = reading.inventory;
    else reading.inventory = this.inventory ?? this.inventoryFromFile();
    reading.refused = turn.refused;
    reading.summary.rpc_turn = turn.index;
    if (turn.refusedCount > 0) reading.summary.dialogs_refused = turn.refusedCount;
    const outcome: ProcessOutcome = { exitCode: null, signal: null, stoppedBy: null, stderrTail: "" };
    const judged = judgePi(
      reading,
      {
        requireExt: options.requireExt ?? [],
        route: options.route === undefined ? this.route : options.route,
        envelope: options.envelope ?? null,
        envelopeTool: this.opts.envelopeTool ?? ENVELOPE_TOOL,
      },
      outcome,
    );
    const decided = decide("pi", judged, outcome);
    const verdict = decided.verdict;
    verdict.envelope = judged.envelope;
    // A stop we asked for names the verdict only when it took: a turn that finished before the abort keeps its own.
    const why = turn.stop;
    if (why !== null && (turn.killed || !verdict.ok)) {
      verdict.ok = false;
      verdict.text = null;
      if (why === "abort") {
        verdict.status = "aborted";
        verdict.failure = "aborted: the turn was aborted on request";
        verdict.summary.stopped_by = "interrupt";
      } else {
        const seconds = (why === "timeout" ? (this.opts.turnTimeoutMs ?? 0) : (this.opts.stallMs ?? 0)) / 1000;
        verdict.status = STOP_STATUS[why];
        verdict.failure =
          turn.stopReason !== null
            ? `${turn.stopReason}; the turn was aborted`
            : why === "timeout"
              ? `timed out after ${seconds} s; the turn was aborted`
              : `stalled: no output from pi for ${seconds} s; the turn was aborted`;
        verdict.summary.stopped_by = why;
        const loop = turn.loop?.verdict();
        if (loop) Object.assign(verdict.summary, { loop_kind: loop.kind, loop_tool: loop.tool, loop_count: loop.count });
        if (turn.budget !== null) verdict.summary.budget_weighted_tokens = turn.budget.state().weighted;
      }
      if (turn.killed) verdict.failure += "; pi did not end the turn after the abort, and its process group was killed";
      // A stop agentport asked for is no fault of the environment.
      verdict.env_fault = false;
      verdict.fault = null;
    }
    return verdict;
  }

  private inventoryFromFile(): Inventory | null {
    const file = this.opts.inventoryFile;
    if (file === undefined || !existsSync(file)) return null;
    try {
      return readInventory(JSON.parse(readFileSync(file, "utf8")));
    } catch {
      // An unreadable inventory proves nothing: the judge fails closed.
      return null;
    }
  }

  // -- sessions and usage ----------------------------------------------------------------

  private async totals(): Promise<Usage> {
    return usageFromStats(await this.stats());
  }

  private baseline(): Usage {
    return (this.sessionId !== null ? this.baselines.get(this.sessionId) : undefined) ?? ZERO_USAGE;
  }

  private announce(session: RpcSession): void {
    this.opts.onSession?.(session);
  }

  private usable(): void {
    if (this.dead !== null) throw this.dead;
    if (this.closing !== null) throw new PiRpcError("pi (rpc): closed", "closed");
  }

  private idle(command: string): void {
    this.usable();
    if (this.turn !== null || this.prompting) throw new PiRpcError(`pi (rpc): ${command} while a turn is running`, "busy");
  }

  // -- the end of the child -----------------------------------------------------------------

  /** pi exited or closed stdout: every pending call fails at once, with the tail of stderr. */
  private childGone(source: "stdout" | "exit"): Promise<void> {
    this.goneHandled ??= this.onGone(source);
    return this.goneHandled;
  }

  private async onGone(source: "stdout" | "exit"): Promise<void> {
    this.gone = true;
    // Let the other half catch up, bounded: the exit code after EOF, the last lines after an exit.
    if (source === "stdout") await Promise.race([this.child.exited.then(() => true), sleep(1_000)]);
    else await Promise.race([this.readerDone.then(() => true), sleep(250)]);
    const exitCode = this.child.exitCode;
    const signal = this.child.signalCode === null ? null : String(this.child.signalCode);
    // Whatever pi left, in its group or not, goes with it; then its stderr ends.
    reapAgent(this.agent);
    if ((await Promise.race([this.stderrDone.then(() => true), sleep(250)])) === false) this.stderrLog.cancel();
    this.stderrLog.finish();
    const stderrTail = this.stderrLog.tail();
    const how = signal !== null ? `was killed by ${signal}` : exitCode !== null ? `exited with code ${exitCode}` : "closed its stdout";
    const tail = lastLines(stderrTail);
    const closing = this.closing !== null;
    const base = closing ? "pi (rpc): closed" : `pi (rpc) ${how}`;
    const make = (what: string, verdict?: Verdict) =>
      new PiRpcError(`${base} ${what}${!closing && tail ? `: ${tail}` : ""}`, closing ? "closed" : "exited", { exitCode, signal, stderrTail, verdict });
    this.dead = make("");
    const pending = [...(this.inFlight === null ? [] : [this.inFlight]), ...this.queue];
    this.inFlight = null;
    this.queue = [];
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(make(`while waiting for ${p.type}`));
    }
    const turn = this.turn;
    if (turn !== null) {
      for (const timer of turn.timers) clearTimeout(timer);
      if (turn.stallTimer !== null) clearTimeout(turn.stallTimer);
      this.turn = null;
      const reading = turn.reducer.reduction();
      reading.sessionId = this.sessionId;
      reading.refused = turn.refused;
      reading.exitedEarly = true;
      reading.failure ??= "pi (rpc): the process ended before the turn did";
      const { verdict } = decide("pi", reading, { exitCode, signal, stoppedBy: closing ? "internal" : null, stderrTail });
      turn.done.reject(make("during a turn", verdict));
    }
  }

  private async shutdown(): Promise<void> {
    try {
      const sink = this.child.stdin;
      const ended = sink.end();
      if (ended instanceof Promise) await ended.catch(() => {});
    } catch {
      // Already closed.
    }
    const grace = this.opts.graceMs ?? DEFAULT_GRACE_MS;
    let exited = await Promise.race([this.child.exited.then(() => true), sleep(this.opts.closeWaitMs ?? DEFAULT_CLOSE_WAIT_MS)]);
    if (!exited) {
      signalGroup(this.pid, "SIGTERM");
      exited = await Promise.race([this.child.exited.then(() => true), sleep(grace)]);
      if (!exited) signalGroup(this.pid, "SIGKILL");
      await this.child.exited;
    }
    signalGroup(this.pid, "SIGKILL");
    await this.childGone("exit");
    await Promise.race([this.readerDone, sleep(grace)]);
  }
}
