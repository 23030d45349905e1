// The lines of an RPC session, routed: responses to the command queue,
// dialogs refused at once (nobody is there to answer, and pi would wait
// forever) and recorded, every other line to the running turn (./turn.ts).
// Opens, aborts and judges turns. No process here: the client gives it a
// writer, its commands and a way to end the session.
import { inventoryFrom } from "../agents/pi/run.ts";
import type { Inventory } from "../core/pi/reducer.ts";
import { MAX_REFUSED, MAX_SUBJECT_CHARS } from "../core/reduction.ts";
import { clean } from "../core/text.ts";
import type { Refused, Verdict } from "../core/verdict.ts";
import type { RpcCommand } from "./commands.ts";
import type { PiRpcStartOptions } from "./options.ts";
import { DIALOG_METHODS, parseMessage, type Json, type PromptOptions } from "./protocol.ts";
import type { CommandQueue } from "./queue.ts";
import { RpcTurn } from "./turn.ts";
import type { PiGone } from "./pi-process.ts";

export type TurnsOptions = Pick<
  PiRpcStartOptions,
  "cwd" | "turnTimeoutMs" | "turnGraceMs" | "stallMs" | "loopRepeat" | "budget" | "onProgress" | "onWarning" | "inventoryFile"
> & {
  envelopeTool: string;
  settles: boolean;
};

export interface TurnsLink {
  queue: CommandQueue;
  /** A command through the client (refused once pi is gone or closing). */
  command: (command: RpcCommand) => Promise<Json>;
  write: (message: Json) => boolean;
  /** pi did not end an aborted turn in time: end the session. */
  kill: () => void;
  /** Whether pi's process tree did work since the last look (asked while a tool call is open). */
  busy: () => boolean;
}

export class RpcTurns {
  turn: RpcTurn | null = null;
  /** Dialogs refused outside any turn (an extension asking at session start). */
  readonly refusedOutside: Refused[] = [];
  settles: boolean;
  private count = 0;
  private inventory: Inventory | null = null;

  constructor(
    private readonly o: TurnsOptions,
    private readonly link: TurnsLink,
  ) {
    this.settles = o.settles;
  }

  /** One stdout line of pi's. */
  line(text: string): void {
    const message = parseMessage(text);
    if (message?.type === "response") {
      this.link.queue.response(message);
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
      this.link.command({ type: "get_state" }).then(
        () => {
          if (this.turn === turn && turn.barrier(generation)) this.closeTurn(turn);
        },
        () => {
          // The barrier failed (pi died, or no answer): the exit handler or the supervisor decides.
        },
      );
    }
  }

  openTurn(options: PromptOptions = {}): RpcTurn {
    this.count += 1;
    const o = this.o;
    const turn: RpcTurn = new RpcTurn(
      {
        index: this.count,
        cwd: o.cwd,
        envelopeTool: o.envelopeTool,
        settles: this.settles,
        supervision: {
          timeoutMs: o.turnTimeoutMs,
          graceMs: o.turnGraceMs,
          stallMs: o.stallMs,
          loopRepeat: o.loopRepeat,
          budget: o.budget,
        },
        onProgress: o.onProgress,
        onWarning: o.onWarning,
        busy: this.link.busy,
      },
      {
        abort: (dialogIds): Promise<void> => this.abortTurn(turn, dialogIds),
        steer: async (message): Promise<void> => void (await this.link.command({ type: "steer", message })),
      },
      options,
    );
    this.turn = turn;
    return turn;
  }

  closeTurn(turn: RpcTurn): void {
    if (turn.usesSettled) this.settles = true;
    if (this.turn === turn) this.turn = null;
    turn.close();
  }

  /** The one judge, with what the prompt asked for; the same when pi died mid-turn. */
  judge(turn: RpcTurn, options: PromptOptions, session: { route: string | null; sessionId: string | null }): Verdict {
    const reading = turn.reducer.reduction();
    if (reading.inventory !== null) this.inventory = reading.inventory;
    return turn.judge({
      envelope: options.envelope ?? null,
      requireExt: options.requireExt ?? [],
      route: options.route === undefined ? session.route : options.route,
      inventory: this.inventory ?? inventoryFrom(this.o.inventoryFile),
      sessionId: session.sessionId,
    });
  }

  /** pi is gone: the running turn, if any, ends with it; its verdict, judged. */
  processGone(
    gone: PiGone,
    closing: boolean,
    session: { route: string | null; sessionId: string | null },
  ): { turn: RpcTurn; verdict: Verdict } | null {
    const turn = this.turn;
    if (turn === null) return null;
    this.turn = null;
    turn.processGone({ ...gone, closing });
    return { turn, verdict: this.judge(turn, turn.options, session) };
  }

  /** A stop: cancel the dialogs, abort; if pi does not end the turn within the command timeout, the session is ended. */
  private async abortTurn(turn: RpcTurn, dialogIds: string[]): Promise<void> {
    for (const id of dialogIds) this.link.write({ type: "extension_ui_response", id, cancelled: true });
    const killer = setTimeout(() => {
      if (this.turn !== turn) return;
      turn.markKilled();
      this.closeTurn(turn);
      this.link.kill();
    }, this.link.queue.timeoutMs);
    void turn.done.promise.then(
      () => clearTimeout(killer),
      () => clearTimeout(killer),
    );
    await this.link.command({ type: "abort" });
  }

  private uiRequest(message: Json): void {
    const method = typeof message.method === "string" ? message.method : "";
    if (!DIALOG_METHODS.has(method)) return;
    const id = message.id;
    this.link.write({ type: "extension_ui_response", id, cancelled: true });
    const subject = clean(message.title, MAX_SUBJECT_CHARS) || clean(message.message, MAX_SUBJECT_CHARS) || method;
    const refused: Refused = { kind: "dialog", subject };
    if (this.turn !== null) this.turn.dialog(id, refused);
    else if (this.refusedOutside.length < MAX_REFUSED) this.refusedOutside.push(refused);
  }
}
