// A live pi session over `pi --mode rpc`: one process, several turns, clones.
//
// The process runs with a phase's flags (piArgv, mode "rpc") as an
// AgentProcess (its own group, the keeper, stderr to a file, its whole tree
// ended on close). Commands go through the command queue
// (./queue.ts, one at a time); every other line goes through the bounded
// LineFramer to the current turn (./turn.ts), which reduces, supervises and
// judges it exactly like a phase. Dialogs are refused at once and recorded; a
// dead child fails every pending call at once with the tail of its stderr.
// Declaring sessions in the ledger is the caller's job: `onSession` and the
// return values say which session pi is in (a clone's id is only known after
// the clone).
//
// The process: ./pi-process.ts; its end told by ./gone.ts. Line routing and
// turns: ./turns.ts, ./turn.ts; when a turn is over: ./turn-end.ts. The
// protocol's types: ./protocol.ts, its commands: ./commands.ts.
import { piArgv, route as routeOf } from "../core/pi/argv.ts";
import type { LineSink } from "../core/frame.ts";
import { ENVELOPE_TOOL } from "../core/pi/reducer.ts";
import { exitCodeFor, type Refused } from "../core/verdict.ts";
import type { RpcCommand } from "./commands.ts";
import { PiProcess, type PiGone } from "./pi-process.ts";
import {
  DIALOG_METHODS,
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
import type { PiRpcStartOptions } from "./options.ts";
import { goneErrors } from "./gone.ts";
import { CommandQueue } from "./queue.ts";
import { treeBusy } from "../io/tree-cpu.ts";
import { dialectSettles } from "./turn-end.ts";
import { RpcTurns } from "./turns.ts";
import { usageFromStats, usageSince, ZERO_USAGE, type Usage } from "./usage.ts";

export { DIALOG_METHODS, PiRpcError };
export type { CloneResult, PiRpcErrorCode, PromptOptions, RpcSession, RpcState, SessionUsage, TurnResult } from "./protocol.ts";
export type { RpcCommand } from "./commands.ts";
export type { PiRpcStartOptions } from "./options.ts";

const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;
/** After stdin is closed pi exits within ~15 ms (§4); extensions' session_shutdown may take a little longer. */
const DEFAULT_CLOSE_WAIT_MS = 3_000;

export class PiRpcClient implements AsyncDisposable {
  readonly pid: number;
  readonly stderrFile: string;
  /** pi's current session. */
  sessionId: string | null = null;
  sessionFile: string | null = null;

  private readonly process: PiProcess;
  private readonly opts: PiRpcStartOptions;
  private readonly queue: CommandQueue;
  /** Samples pi's tree while a tool call is open (made on first use). */
  private sampler: (() => boolean) | null = null;
  private readonly turns: RpcTurns;
  private route: string | null;
  /** A prompt() is between its call and its turn's end. */
  private prompting = false;
  private baselines = new Map<string, Usage>();
  private dead: PiRpcError | null = null;
  private closing: Promise<void> | null = null;

  private constructor(opts: PiRpcStartOptions) {
    this.opts = opts;
    this.stderrFile = opts.stderrFile;
    this.queue = new CommandQueue({
      write: (message) => this.process.write(message),
      timeoutMs: opts.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS,
      // stdin is gone: the exit handler fails everything with stderr's tail.
      onWriteFailed: () => void this.process.gone("stdout"),
    });
    this.route = opts.model ? routeOf(opts.model, opts.gateway, opts.direct) : null;
    this.turns = new RpcTurns(
      { ...opts, envelopeTool: opts.envelopeTool ?? ENVELOPE_TOOL, settles: opts.settled ?? dialectSettles(opts.caps.version) },
      {
        queue: this.queue,
        command: (c) => this.command(c),
        write: (m) => this.process.write(m),
        kill: () => void this.close(),
        busy: () => (this.sampler ??= treeBusy(this.process.ref))(),
      },
    );
    const sink: LineSink = {
      line: (text) => this.turns.line(text),
      oversize: (limit) => this.turns.turn?.reducer.oversize(limit),
      framingError: (what) => this.turns.turn?.reducer.framingError(what),
      unterminated: (text) => this.turns.line(text),
    };
    this.process = new PiProcess(
      {
        argv: piArgv({ ...opts, mode: "rpc" }),
        cwd: opts.cwd,
        env: opts.env,
        stderrFile: opts.stderrFile,
        graceMs: opts.graceMs,
        maxLineBytes: opts.maxLineBytes,
      },
      sink,
      () => this.turns.turn?.activity(),
      (gone) => this.onGone(gone),
    );
    this.pid = this.process.pid;
  }

  /** Dialogs refused outside any turn (an extension asking at session start). */
  get refusedOutside(): Refused[] {
    return this.turns.refusedOutside;
  }

  /** Start `pi --mode rpc`, learn its session (get_state) and the baseline of its stats. */
  static async start(opts: PiRpcStartOptions): Promise<PiRpcClient> {
    const client = new PiRpcClient(opts);
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
    if (this.turns.turn !== null || this.prompting) throw new PiRpcError("pi (rpc): a turn is already running", "busy");
    this.prompting = true;
    try {
      return await this.runTurn(message, options);
    } finally {
      this.prompting = false;
    }
  }

  private async runTurn(message: string, options: PromptOptions): Promise<TurnResult> {
    const before = await this.totals();
    const turn = this.turns.openTurn(options);
    try {
      await this.command({ type: "prompt", message });
    } catch (error) {
      this.turns.closeTurn(turn);
      throw error;
    }
    await turn.done.promise;
    const verdict = this.turns.judge(turn, options, this.where());
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
    const response = await this.command({ type: "get_state" });
    const state = stateFrom((response.data ?? {}) as Json);
    this.sessionId = state.sessionId;
    this.sessionFile = state.sessionFile;
    return state;
  }

  /** get_session_stats, as pi reports it (cumulative, a clone's copied history included). */
  async stats(): Promise<Json> {
    const response = await this.command({ type: "get_session_stats" });
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
    const response = await this.command({ type: "clone" });
    if ((response.data as Json | undefined)?.cancelled === true)
      throw new PiRpcError("pi (rpc): clone was cancelled by an extension", "cancelled");
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
    const response = await this.command({ type: "switch_session", sessionPath: sessionFile });
    if ((response.data as Json | undefined)?.cancelled === true)
      throw new PiRpcError("pi (rpc): switch_session was cancelled by an extension", "cancelled");
    const state = await this.state();
    if (state.sessionId !== null) {
      if (!this.baselines.has(state.sessionId)) this.baselines.set(state.sessionId, await this.totals());
      this.announce({ sessionId: state.sessionId, sessionFile: state.sessionFile, reason: "switch", parentId: null, parentFile: null });
    }
    return state;
  }

  /** set_model; later turns are judged against `provider/modelId`. Returns pi's model object. */
  async setModel(provider: string, modelId: string): Promise<Json> {
    const response = await this.command({ type: "set_model", provider, modelId });
    this.route = `${provider}/${modelId}`;
    return (response.data ?? {}) as Json;
  }

  /** set_thinking_level (pi accepts any value; an invalid one becomes "off"). */
  async setThinking(level: string): Promise<void> {
    await this.command({ type: "set_thinking_level", level });
  }

  /** abort the running turn (its verdict says "aborted"); pending dialogs are cancelled first (abort does not release them). */
  async abort(): Promise<void> {
    const turn = this.turns.turn;
    if (turn !== null) await turn.interrupt();
    else await this.command({ type: "abort" });
  }

  /** Any command (get_messages, get_available_models, …), through the same queue: its whole response, or a rejection. */
  async request(command: RpcCommand): Promise<Json> {
    return await this.command(command);
  }

  /** End stdin (pi exits at once), wait briefly, then TERM and KILL its whole tree. Idempotent. */
  close(): Promise<void> {
    this.closing ??= this.process.close(this.opts.closeWaitMs ?? DEFAULT_CLOSE_WAIT_MS);
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private command(command: RpcCommand): Promise<Json> {
    if (this.dead !== null) return Promise.reject(this.dead);
    if (this.closing !== null)
      return Promise.reject(new PiRpcError(`pi (rpc): closed; cannot send ${command.type}`, "closed", { command: command.type }));
    return this.queue.send(command);
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

  /** What a turn is judged against. */
  private where(): { route: string | null; sessionId: string | null } {
    return { route: this.route, sessionId: this.sessionId };
  }

  private idle(command: string): void {
    this.usable();
    if (this.turns.turn !== null || this.prompting) throw new PiRpcError(`pi (rpc): ${command} while a turn is running`, "busy");
  }

  /** pi exited or closed stdout: every pending call fails at once, with the tail of its stderr. */
  private onGone(gone: PiGone): void {
    const closing = this.closing !== null;
    const make = goneErrors(gone, closing);
    this.dead = make("");
    this.queue.fail(this.dead, (type) => make(`while waiting for ${type}`));
    const ended = this.turns.processGone(gone, closing, this.where());
    ended?.turn.done.reject(make("during a turn", ended.verdict));
  }
}
