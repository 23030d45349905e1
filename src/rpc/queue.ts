// The command queue of an RPC session: pi does not serialize commands, so
// they go one at a time, each with its own id, and the next is sent only when
// the one in flight is answered (or timed out). A response without an id
// (unknown command, unparseable line) answers the command in flight. No
// process here: the client gives it a writer, and tests give it a fake one.
import { clean } from "../core/text.ts";
import type { RpcCommand } from "./commands.ts";
import { PiRpcError, type Json } from "./protocol.ts";

interface Pending {
  id: string;
  command: RpcCommand;
  timeoutMs: number;
  resolve: (response: Json) => void;
  reject: (error: Error) => void;
  timer?: ReturnType<typeof setTimeout>;
}

export interface QueueOptions {
  /** Write one command line; false when the other side is gone. */
  write: (message: Json) => boolean;
  timeoutMs: number;
  /** A write failed: the owner ends the session (and calls `fail`). */
  onWriteFailed: () => void;
}

export class CommandQueue {
  private seq = 0;
  private queue: Pending[] = [];
  private inFlight: Pending | null = null;
  private failed: Error | null = null;

  constructor(private readonly options: QueueOptions) {}

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /** Queue a command; its response, or a rejection (refused, timed out, the session failed). */
  send(command: RpcCommand, timeoutMs = this.options.timeoutMs): Promise<Json> {
    if (this.failed !== null) return Promise.reject(this.failed);
    return new Promise<Json>((resolve, reject) => {
      this.seq += 1;
      this.queue.push({ id: `ap-${this.seq}`, command, timeoutMs, resolve, reject });
      this.pump();
    });
  }

  /** A `type: "response"` line from pi. */
  response(message: Json): void {
    const pending = this.inFlight;
    if (pending === null || (message.id !== undefined && message.id !== pending.id)) return;
    clearTimeout(pending.timer);
    this.inFlight = null;
    if (message.success === true) pending.resolve(message);
    else {
      const why = clean(message.error, 400) || "no error given";
      pending.reject(
        new PiRpcError(`pi (rpc) refused ${pending.command.type}: ${why}`, "command_failed", {
          command: pending.command.type,
          response: message,
        }),
      );
    }
    this.pump();
  }

  /** The session is over: every pending command fails with `make(type)`, and so does every later one with `error`. */
  fail(error: Error, make: (type: string) => Error): void {
    this.failed ??= error;
    const pending = [...(this.inFlight === null ? [] : [this.inFlight]), ...this.queue];
    this.inFlight = null;
    this.queue = [];
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(make(p.command.type));
    }
  }

  private pump(): void {
    if (this.inFlight !== null || this.failed !== null) return;
    const next = this.queue.shift();
    if (next === undefined) return;
    this.inFlight = next;
    next.timer = setTimeout(() => {
      if (this.inFlight !== next) return;
      this.inFlight = null;
      next.reject(
        new PiRpcError(`pi (rpc): no response to ${next.command.type} within ${next.timeoutMs / 1000} s`, "command_timeout", {
          command: next.command.type,
        }),
      );
      this.pump();
    }, next.timeoutMs);
    if (!this.options.write({ id: next.id, ...next.command })) this.options.onWriteFailed();
  }
}
