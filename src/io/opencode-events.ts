// opencode serve's event stream (`GET /event`): server-sent events read
// through the bounded line framer, each event's `data` one line into the
// caller's sink (core/sse.ts). Part of the serve client (opencode-server.ts).
import { isUtf8 } from "node:buffer";
import { LineFramer, type LineSink } from "../core/frame.ts";
import { SseData } from "../core/sse.ts";
import { OpencodeServerError } from "./opencode-error.ts";

export interface EventOptions {
  /** The project folder whose events these are (opencode's `?directory=`). */
  directory?: string;
  signal?: AbortSignal;
  /** Each event's data at most (default 8 MiB); a larger one reaches the sink as `oversize`. */
  maxLineBytes?: number;
  /** Bytes arrived (a heartbeat too): the caller's stall clock. */
  onChunk?: () => void;
}

/** How the event stream ended: the server closed it, the caller did, or the connection broke. */
export type EventEnd = { kind: "closed" } | { kind: "cancelled" } | { kind: "broken"; message: string };

export interface EventStream {
  /** The server answered 200 text/event-stream (rejects with OpencodeServerError). */
  opened: Promise<void>;
  /** The stream is over; the sink has had every event (never rejects). */
  ended: Promise<EventEnd>;
  close(): void;
}

const DEFAULT_EVENT_BYTES = 8 * 1024 * 1024;

export function openEventStream(url: string, authorization: string, sink: LineSink, options: EventOptions): EventStream {
  const controller = new AbortController();
  const signal = options.signal === undefined ? controller.signal : AbortSignal.any([controller.signal, options.signal]);
  const bound = options.maxLineBytes ?? DEFAULT_EVENT_BYTES;
  const sse = new SseData(sink, bound);
  const framer = new LineFramer(sse, bound, { isUtf8 });
  let resolveOpened!: () => void;
  let rejectOpened!: (error: unknown) => void;
  const opened = new Promise<void>((res, rej) => {
    resolveOpened = res;
    rejectOpened = rej;
  });
  // Awaited by `ended` only: a caller that never looks at `opened` gets no unhandled rejection.
  opened.catch(() => {});
  const ended = (async (): Promise<EventEnd> => {
    let response: Response;
    try {
      response = await fetch(url, { headers: { authorization, accept: "text/event-stream" }, signal });
    } catch (error) {
      rejectOpened(
        new OpencodeServerError("transport", `opencode serve: GET /event: ${(error as Error).message}`, undefined, "GET /event"),
      );
      return controller.signal.aborted ? { kind: "cancelled" } : { kind: "broken", message: (error as Error).message };
    }
    const type = response.headers.get("content-type") ?? "";
    if (response.status !== 200 || !type.startsWith("text/event-stream") || response.body === null) {
      await response.body?.cancel().catch(() => {});
      const error = new OpencodeServerError(
        response.status === 200 ? "protocol" : "http",
        `opencode serve: GET /event answered ${response.status} ${type}`,
        response.status,
        "GET /event",
      );
      rejectOpened(error);
      return { kind: "broken", message: error.message };
    }
    resolveOpened();
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        framer.push(value);
        options.onChunk?.();
      }
      return { kind: "closed" };
    } catch (error) {
      return controller.signal.aborted ? { kind: "cancelled" } : { kind: "broken", message: (error as Error).message };
    } finally {
      framer.end();
      sse.end();
      reader.releaseLock();
    }
  })();
  return { opened, ended, close: () => controller.abort() };
}
