// A live pi session over `pi --mode rpc`: one process, several turns, clones.
//
// The process runs with a phase's flags (piArgv, mode "rpc") in its own
// process group; stderr goes to a file. Commands go through the command queue
// (./queue.ts, one at a time); every other line goes through the bounded
// LineFramer to the current turn (./turn.ts), which reduces, supervises and
// judges it exactly like a phase. Dialogs are refused at once and recorded; a
// dead child fails every pending call at once with the tail of its stderr.
// Declaring sessions in the ledger is the caller's job: `onSession` and the
// return values say which session pi is in (a clone's id is only known after
// the clone).
//
// When a turn is over: see ./turn-end.ts. The protocol's types: ./protocol.ts.
import { piArgv, route as routeOf, type PiArgvRequest } from "../agents/pi-argv.ts";
import { inventoryFrom } from "../agents/pi-run.ts";
import type { BudgetOptions } from "../core/budget.ts";
import type { Env } from "../core/env.ts";
import { LineFramer, type LineSink } from "../core/frame.ts";
import { ENVELOPE_TOOL, type Inventory } from "../core/pi/reducer.ts";
import type { ProgressSink } from "../core/progress.ts";
import { MAX_REFUSED, MAX_SUBJECT_CHARS } from "../core/reduction.ts";
import { clean } from "../core/text.ts";
import { exitCodeFor, type Refused, type Verdict } from "../core/verdict.ts";
import { reapAgent, signalGroup, spawnAgent } from "../io/spawn.ts";
import type { ProcessRef } from "../io/proc.ts";
import { treeBusy } from "../io/tree-cpu.ts";
import { StderrLog } from "../io/stderr-log.ts";
import {
  DIALOG_METHODS,
  parseMessage,
  PiRpcError,
  stateFrom,
  type CloneResult,
  type Json,
  type PromptOptions,
  type RpcSession,
  type RpcState,
  type SessionUsage,
  type TurnResult,
} from "./protocol.ts";
import { CommandQueue } from "./queue.ts";
import { RpcTurn } from "./turn.ts";
import { dialectSettles } from "./turn-end.ts";
import { usageFromStats, usageSince, ZERO_USAGE, type Usage } from "./usage.ts";

export { DIALOG_METHODS, PiRpcError };
export type { CloneResult, PiRpcErrorCode, PromptOptions, RpcSession, RpcState, SessionUsage, TurnResult } from "./protocol.ts";

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
  /** A supervisor warning (the budget in warn mode), said once per turn. */
  onWarning?: (text: string) => void;
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

const sleep = (ms: number) => new Promise<false>((resolve) => setTimeout(() => resolve(false), ms));
const lastLines = (text: string): string => clean(text.split("\n").filter((l) => l.trim()).slice(-3).join(" | "), 240);

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
  private readonly queue: CommandQueue;
  private readonly framer: LineFramer;
  private route: string | null;
  private settles: boolean;
  private turn: RpcTurn | null = null;
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
    this.queue = new CommandQueue({
      write: (message) => this.write(message),
      timeoutMs: opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      // stdin is gone: the exit handler fails everything with stderr's tail.
      onWriteFailed: () => void this.childGone("stdout"),
    });
    this.route = opts.model ? routeOf(opts.model, opts.gateway, opts.direct) : null;
    this.settles = opts.settled ?? dialectSettles(opts.caps.version);
    const sink: LineSink = {
      line: (text) => this.line(text),
      oversize: (limit) => this.turn?.reducer.oversize(limit),
      framingError: (what) => this.turn?.reducer.framingError(what),
      unterminated: (text) => this.line(text),
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
    const turn = this.openTurn(options);
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
    const state = stateFrom((response.data ?? {}) as Json);
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
    if (turn !== null) await turn.interrupt();
    else await this.command("abort");
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

  private command(type: string, fields: Json = {}): Promise<Json> {
    if (this.dead !== null) return Promise.reject(this.dead);
    if (this.closing !== null) return Promise.reject(new PiRpcError(`pi (rpc): closed; cannot send ${type}`, "closed", { command: type }));
    return this.queue.send(type, fields);
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
        this.turn?.activity();
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
    const message = parseMessage(text);
    if (message?.type === "response") {
      this.queue.response(message);
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
    const signal = turn.event(text, message);
    if (signal.kind === "end") this.closeTurn(turn);
    else if (signal.kind === "barrier") {
      const generation = signal.generation;
      this.command("get_state").then(
        () => {
          if (this.turn === turn && turn.barrier(generation)) this.closeTurn(turn);
        },
        () => {
          // The barrier failed (pi died, or no answer): the exit handler or the supervisor decides.
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
    if (this.turn !== null) this.turn.dialog(id, refused);
    else if (this.refusedOutside.length < MAX_REFUSED) this.refusedOutside.push(refused);
  }

  // -- turns --------------------------------------------------------------------------

  /** The one judge, with what the prompt asked for; the same when pi died mid-turn. */
  private judge(turn: RpcTurn, options: PromptOptions): Verdict {
    const reading = turn.reducer.reduction();
    if (reading.inventory !== null) this.inventory = reading.inventory;
    return turn.judge({
      envelope: options.envelope ?? null,
      requireExt: options.requireExt ?? [],
      route: options.route === undefined ? this.route : options.route,
      inventory: this.inventory ?? inventoryFrom(this.opts.inventoryFile),
      sessionId: this.sessionId,
    });
  }

  private openTurn(options: PromptOptions = {}): RpcTurn {
    this.turns += 1;
    const o = this.opts;
    const turn: RpcTurn = new RpcTurn(
      {
        index: this.turns,
        cwd: o.cwd,
        envelopeTool: o.envelopeTool ?? ENVELOPE_TOOL,
        settles: this.settles,
        supervision: { timeoutMs: o.turnTimeoutMs, stallMs: o.stallMs, loopRepeat: o.loopRepeat, budget: o.budget },
        onProgress: o.onProgress,
        onWarning: o.onWarning,
        busy: treeBusy(this.agent),
      },
      { abort: (dialogIds): Promise<void> => this.abortTurn(turn, dialogIds) },
      options,
    );
    this.turn = turn;
    return turn;
  }

  /** A stop: cancel the dialogs, abort; if pi does not end the turn within the command timeout, kill the group. */
  private async abortTurn(turn: RpcTurn, dialogIds: string[]): Promise<void> {
    for (const id of dialogIds) this.write({ type: "extension_ui_response", id, cancelled: true });
    const killer = setTimeout(() => {
      if (this.turn !== turn) return;
      turn.markKilled();
      this.closeTurn(turn);
      void this.close();
    }, this.queue.timeoutMs);
    void turn.done.promise.then(() => clearTimeout(killer), () => clearTimeout(killer));
    await this.command("abort");
  }

  private closeTurn(turn: RpcTurn): void {
    if (turn.usesSettled) this.settles = true;
    if (this.turn === turn) this.turn = null;
    turn.close();
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
    this.queue.fail(this.dead, (type) => make(`while waiting for ${type}`));
    const turn = this.turn;
    if (turn !== null) {
      this.turn = null;
      turn.processGone({ exitCode, signal, stderrTail, closing });
      const verdict = this.judge(turn, turn.options);
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
