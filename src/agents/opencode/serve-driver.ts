// The driver of one opencode serve turn, in the place of the process driver
// (spawn.ts) and with its contract: start `opencode serve` (its own password,
// watched by the keeper), open the event stream, create the session (or find
// the one a resume continues) and bind it before the prompt, send the prompt
// (prompt_async), feed the session's events to the reducer until the session
// is idle, answer its permission requests, and let the supervisor stop it:
// a stop aborts the session over HTTP first. The server and every process it
// started are killed at the end in every case. The supervisor's clocks start
// once the session is there, just before the prompt: the server's start-up
// has its own bound (startTimeoutMs), and each request its own timeout.
import type { StoppedBy } from "../../core/outcome.ts";
import type { LineSink } from "../../core/frame.ts";
import type { OpencodeServeReducer, PermissionAsked } from "../../core/opencode/serve-reducer.ts";
import { OpencodeServerError, type CallOptions, type OpencodeServer, type PermissionReply } from "../../io/opencode-server.ts";
import { startOpencodeServer } from "../../io/opencode-start.ts";
import { SpawnError, type DriveRequest, type DriveResult } from "../../io/spawn.ts";
import { treeBusy } from "../../io/tree-cpu.ts";
import { Watch } from "../../io/watch.ts";

export interface ServeTurn {
  /** The reducer the phase reads (the request's reducer may be a recording of it). */
  reducer: OpencodeServeReducer;
  /** The opencode session a resume continues; else a new one is created. */
  continued?: string;
  /** `provider/model` for the prompt; else the server's default. */
  model?: string;
  /** Told the new session's id before the prompt is sent (the ledger binds it); a rejection fails the turn. */
  onSession: (sessionId: string) => Promise<void>;
  /** The answer to a permission request (and the message given with a rejection). */
  answer: (asked: PermissionAsked) => { reply: PermissionReply; message?: string };
  startTimeoutMs?: number;
}

/** How long a stopped turn's session may take to say it is idle after the abort. */
const ABORT_WAIT_MS = 3_000;
/** How long a turn that ended without its idle waits to learn whether the server died. */
const DEATH_WAIT_MS = 1_000;

/** The hooks the reducer calls while the driver runs (permission requests), set once the server is up. */
export class ServeHooks {
  onPermission: (asked: PermissionAsked) => void = () => {};
}

export function serveDriver(turn: ServeTurn, hooks: ServeHooks): (request: DriveRequest) => Promise<DriveResult> {
  return async (request) => {
    const started = performance.now();
    let server: OpencodeServer;
    try {
      server = await startOpencodeServer({
        bin: request.argv[0] ?? "opencode",
        cwd: request.cwd,
        env: request.env,
        stderrFile: request.stderrFile,
        startTimeoutMs: turn.startTimeoutMs,
        graceMs: request.graceMs,
      });
    } catch (error) {
      if (error instanceof OpencodeServerError)
        throw new SpawnError(error.message, error.code === "not_found" ? "not_found" : "spawn_failed");
      throw error;
    }
    request.onSpawn?.(server.pid);
    let sessionId: string | null = null;
    let stoppedBy: StoppedBy | null = null;
    let stopReason: string | undefined;
    let idle: () => void = () => {};
    const over = new Promise<void>((res) => (idle = res));
    let seen = 0;
    // Only the session's events reach the recording and the reducer (a cheap look for its id first; the reducer checks exactly).
    const sink: LineSink = {
      line: (text) => {
        if (sessionId === null || !text.includes(`"sessionID":"${sessionId}"`)) return;
        request.reducer.line(text);
        if (turn.reducer.finished()) idle();
      },
      oversize: (limit) => request.reducer.oversize(limit),
      framingError: (what) => request.reducer.framingError(what),
      unterminated: (text) => sink.line(text),
    };
    let watch: Watch | null = null;
    const stop = (why: StoppedBy, reason?: string) => {
      if (stoppedBy !== null || turn.reducer.finished()) return;
      stoppedBy = why;
      stopReason = reason;
      watch?.halt();
      idle();
    };
    const events = server.events(sink, {
      maxLineBytes: request.maxLineBytes,
      onChunk: () => {
        // The server's heartbeats are not the agent's: only the session's events restart the stall clock.
        if (turn.reducer.seen !== seen) {
          seen = turn.reducer.seen;
          watch?.activity();
        }
      },
    });
    hooks.onPermission = (asked) => {
      const { reply, message } = turn.answer(asked);
      void server
        .replyPermission(asked.id, { reply, ...(message ? { message } : {}) })
        .catch((error: unknown) => turn.reducer.requestFailed(`reply to permission ${asked.permission}`, error));
    };
    const onAbort = () => stop("interrupt", typeof request.signal?.reason === "string" ? request.signal.reason : undefined);
    try {
      await events.opened;
      if (turn.continued !== undefined) {
        sessionId = (await server.getSession(turn.continued)).id;
      } else {
        sessionId = (await server.createSession({})).id;
        await turn.onSession(sessionId);
      }
      if (request.supervisor !== undefined) {
        watch = new Watch(request.supervisor, request.reducer, {
          onWarning: request.onWarning,
          onStop: (s) => stop(s.kind, s.reason),
          onWrapUp: tellWrapUp(server, sessionId, turn.model, turn.reducer),
          busy: treeBusy(server.process, { server: true }),
        });
      }
      request.signal?.addEventListener("abort", onAbort, { once: true });
      if (request.signal?.aborted) onAbort();
      if (stoppedBy === null) await server.promptAsync(sessionId, { text: request.stdin ?? "", model: modelOf(turn.model) });
      // The turn ends at the session's idle, a stop, or a stream that ends (the server died).
      await Promise.race([over, events.ended]);
      if (stoppedBy !== null) {
        await server.abort(sessionId, { timeoutMs: ABORT_WAIT_MS }).catch(() => {});
        // Its last events (the aborted message, the idle) are the stream's end.
        await Promise.race([waitIdle(turn.reducer, events.ended), Bun.sleep(ABORT_WAIT_MS)]);
      }
    } catch (error) {
      if (!(error instanceof OpencodeServerError)) {
        await server.stop();
        throw error;
      }
      // A request agentport's own loopback server did not answer is no network fault: say so without the socket's words.
      const why = error.code === "transport" ? new Error(`${error.request ?? "a request"}: the server did not answer`) : error;
      turn.reducer.requestFailed(sessionId === null && turn.continued !== undefined ? `find session ${turn.continued}` : "the turn", why);
    } finally {
      watch?.halt();
      request.signal?.removeEventListener("abort", onAbort);
    }
    // A server that died on its own is the turn's outcome; one ended here after the turn is not.
    // A turn that ended neither idle nor stopped may be a death not yet reaped: give it a moment.
    if (!turn.reducer.finished() && stoppedBy === null) await Promise.race([server.exited, Bun.sleep(DEATH_WAIT_MS)]);
    const died = server.exitStatus;
    const stderrTail = server.stderrTail();
    events.close();
    await events.ended;
    await server.stop();
    request.reducer.streamEnded();
    return {
      pid: server.pid,
      durationMs: Math.round(performance.now() - started),
      exitCode: died === null ? 0 : died.exitCode,
      signal: died?.signal ?? null,
      stoppedBy,
      stopReason,
      // A stop after the session went idle is no stop at all (stop() ignores it): a stop is always before the end.
      finishedAtStop: false,
      stderrTail,
      framing: { lines: turn.reducer.seen, bytes: 0, oversize: 0 },
    };
  };
}

/** --grace: the wrap-up posted into the busy session (`prompt_async`); opencode takes it at its next step. */
export function tellWrapUp(
  server: OpencodeServer,
  sessionId: string,
  model: string | undefined,
  reducer: OpencodeServeReducer,
  options: CallOptions = {},
): (text: string) => void {
  return (text) =>
    void server
      .promptAsync(sessionId, { text, model: modelOf(model) }, options)
      .catch((error: unknown) => reducer.requestFailed("tell the wrap-up", error));
}

async function waitIdle(reducer: OpencodeServeReducer, ended: Promise<unknown>): Promise<void> {
  const until = Promise.race([ended, Bun.sleep(ABORT_WAIT_MS)]);
  let done = false;
  void until.then(() => (done = true));
  while (!done && !reducer.finished()) await Bun.sleep(50);
}

/** opencode's `{providerID, modelID}` of a `provider/model` id. */
export function modelOf(model: string | undefined): { providerID: string; modelID: string } | undefined {
  if (model === undefined) return undefined;
  const slash = model.indexOf("/");
  return slash <= 0 ? undefined : { providerID: model.slice(0, slash), modelID: model.slice(slash + 1) };
}
