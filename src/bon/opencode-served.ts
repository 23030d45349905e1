// opencode behind the batch's seam (sessions.ts), every session on one
// `opencode serve` (src/io/opencode-server.ts) started for the batch:
//   prime   `POST /session` in the prime's workspace, the reading turn by
//           `prompt_async`, observed on that folder's event stream until the
//           session is idle (src/core/opencode/serve-reducer.ts)
//   arm     `POST /session/PRIME/fork`; in a workspace of its own the fork is
//           moved there (a fork stays in its source's folder, where its tools
//           would run), then its turn as the prime's
// Several arms run at once on the one server. Each turn is supervised as a
// process is (timeout, stall on the session's own events, loop, budget): a
// stop aborts the session (`POST /session/{id}/abort`); with --grace the
// wrap-up is posted into the busy session first, as `run --serve` does. A permission opencode
// asks for is rejected: nobody is there to answer. The server and every tool
// it started go at the end, and with agentport (the keeper).
import { realpathSync } from "node:fs";
import { join } from "node:path";
import { modelOf, tellWrapUp } from "../agents/opencode/serve-driver.ts";
import { envelopeOfText } from "../agents/stream-phase.ts";
import type { LineSink } from "../core/frame.ts";
import { judge } from "../core/judge.ts";
import { OpencodeServeReducer } from "../core/opencode/serve-reducer.ts";
import type { ProcessOutcome } from "../core/outcome.ts";
import { Supervisor, type Stop } from "../core/supervisor.ts";
import type { EventStream, OpencodeServer, PermissionRule } from "../io/opencode-server.ts";
import { startOpencodeServer } from "../io/opencode-start.ts";
import { killAgent } from "../io/agent-process.ts";
import { Watch } from "../io/watch.ts";
import { NOT_STARTED, OpencodeAgent, sameFolder, turnedOf } from "./opencode-common.ts";
import { errorMessage, noTurn, type AgentSession, type BonAgent, type SessionRequest, type Turned } from "./sessions.ts";
import type { Workspace } from "./workspace.ts";

export interface ServedSession extends AgentSession {
  sessionId: string;
  cwd: string;
  progress: SessionRequest["progress"];
}

/** What `opencode run` denies in every session it makes: nobody can answer a question or approve a plan. */
const HEADLESS_RULES: PermissionRule[] = ["question", "plan_enter", "plan_exit"].map((permission) => ({
  permission,
  pattern: "*",
  action: "deny",
}));

/** After an abort, how long the session may take to say it is idle. */
const ABORT_GRACE_MS = 5_000;

/** One folder's event stream, its lines handed to every turn listening there. */
interface FolderEvents {
  stream: EventStream;
  listeners: Set<LineSink>;
}

export class OpencodeServed extends OpencodeAgent implements BonAgent<ServedSession> {
  readonly kind = "server";
  readonly armsFrom = "fork";
  private server: Promise<OpencodeServer> | null = null;
  private started: OpencodeServer | null = null;
  private readonly folders = new Map<string, Promise<FolderEvents>>();
  private readonly busy = new Map<string, string>();
  /** Where each session k works: a folder's stream closes with the last session there. */
  private readonly folderOf = new Map<number, string>();
  private prime: { id: string; cwd: string } | null = null;

  /** The batch's server, started in the prime's folder (the default folder of its requests). */
  private serve(cwd: string): Promise<OpencodeServer> {
    this.server ??= startOpencodeServer({
      bin: this.o.bin,
      cwd,
      env: this.env("serve"),
      stderrFile: join(this.batch.runDir, "serve.stderr.log"),
    }).then((server) => {
      this.started = server;
      this.o.say(`bon: opencode serve listening on ${server.url} after ${(server.startMs / 1000).toFixed(1)} s`);
      return server;
    });
    return this.server;
  }

  async open(k: number, ws: Workspace, r: SessionRequest): Promise<ServedSession> {
    const server = await this.serve(ws.cwd);
    const cwd = realpathSync(ws.cwd);
    const prime = this.prime;
    const made =
      k === 0 || prime === null
        ? await server.createSession({ title: `bon ${r.label}`, permission: HEADLESS_RULES }, { directory: cwd })
        : await server.forkSession(prime.id, {}, { directory: prime.cwd });
    if (prime !== null && k > 0 && !sameFolder(cwd, prime.cwd)) await server.moveSession(made.id, cwd, { directory: prime.cwd });
    this.folderOf.set(k, cwd);
    return { sessionId: made.id, sessionFile: null, cwd, progress: r.progress };
  }

  /** The folder's event stream, opened once and shared by the turns there. */
  private events(server: OpencodeServer, cwd: string): Promise<FolderEvents> {
    let made = this.folders.get(cwd);
    if (made === undefined) {
      const listeners = new Set<LineSink>();
      const each = (call: (sink: LineSink) => void) => {
        for (const sink of listeners) call(sink);
      };
      const fanout: LineSink = {
        line: (text) => each((s) => s.line(text)),
        oversize: (limit) => each((s) => s.oversize(limit)),
        framingError: (what) => each((s) => s.framingError(what)),
        unterminated: (text) => each((s) => s.unterminated(text)),
      };
      const stream = server.events(fanout, { directory: cwd, maxLineBytes: this.o.maxLineBytes });
      made = stream.opened.then(() => ({ stream, listeners }));
      this.folders.set(cwd, made);
    }
    return made;
  }

  async turn(session: ServedSession, text: string, model: string | null): Promise<Turned> {
    if (this.interrupted) return NOT_STARTED;
    const server = this.started;
    if (server === null) return noTurn("opencode serve is not running", "failed");
    const { sessionId: id, cwd } = session;
    const supervisor = new Supervisor({
      timeoutMs: this.o.turnTimeoutMs,
      graceMs: this.o.turnGraceMs,
      stallMs: this.o.stallMs,
      loopRepeat: this.o.loopRepeat,
      budget: this.o.budget,
    });
    const reducer = new OpencodeServeReducer({
      sessionId: id,
      cwd,
      emit: session.progress,
      loop: supervisor.loop,
      onPermission: (asked) => void server.replyPermission(asked.id, { reply: "reject" }, { directory: cwd }).catch(() => {}),
    });
    let over!: () => void;
    const ended = new Promise<void>((resolve) => (over = resolve));
    let stop: Stop | null = null;
    const watch = new Watch(supervisor, reducer, {
      onStop: (why) => {
        stop = why;
        void server.abort(id, { directory: cwd }).catch(() => {});
        setTimeout(over, ABORT_GRACE_MS).unref();
      },
      onWrapUp: tellWrapUp(server, id, model ?? undefined, reducer, { directory: cwd }),
    });
    let seen = 0;
    const after = () => {
      // The stall clock counts the session's own events, not the server's heartbeats or other sessions'.
      if (reducer.seen !== seen) {
        seen = reducer.seen;
        watch.activity();
      }
      if (reducer.finished()) over();
    };
    const listener: LineSink = {
      line: (t) => (reducer.line(t), after()),
      oversize: (n) => (reducer.oversize(n), after()),
      framingError: (w) => (reducer.framingError(w), after()),
      unterminated: (t) => (reducer.unterminated(t), after()),
    };
    let folder: FolderEvents | null = null;
    try {
      folder = await this.events(server, cwd);
      folder.listeners.add(listener);
      void folder.stream.ended.then(over);
      this.busy.set(id, cwd);
      await server.promptAsync(
        id,
        { text: this.envelope.prompt(text), model: modelOf(model ?? undefined) },
        { directory: cwd, signal: this.o.signal },
      );
      await ended;
    } catch (error) {
      return noTurn(errorMessage(error), this.interrupted ? "interrupted" : "failed");
    } finally {
      watch.halt();
      folder?.listeners.delete(listener);
      this.busy.delete(id);
    }
    reducer.streamEnded();
    const stoppedBy = (stop as Stop | null)?.kind ?? (this.interrupted ? "interrupt" : null);
    const proc: ProcessOutcome = {
      exitCode: stoppedBy === null ? 0 : null,
      signal: null,
      stoppedBy,
      stopReason: (stop as Stop | null)?.reason,
      stderrTail: server.stderrTail(),
    };
    const reduction = reducer.reduction();
    return turnedOf(
      judge({
        agent: "opencode",
        sessionId: id,
        proc,
        facts: supervisor.facts(),
        reduction,
        envelope: envelopeOfText({ check: this.envelope.check, file: "" }, reduction.text),
      }),
    );
  }

  async primed(session: ServedSession): Promise<string> {
    this.prime = { id: session.sessionId, cwd: session.cwd };
    return "";
  }

  /** The session stays in the server's database; its folder's stream closes once no session works there (its workspace goes next). */
  async release(k: number): Promise<void> {
    const cwd = this.folderOf.get(k);
    this.folderOf.delete(k);
    if (cwd === undefined || cwd === this.prime?.cwd || [...this.folderOf.values()].includes(cwd)) return;
    const folder = this.folders.get(cwd);
    this.folders.delete(cwd);
    await folder?.then(
      (f) => f.stream.close(),
      () => {},
    );
  }

  abortAll(): void {
    const server = this.started;
    if (server === null) return;
    for (const [id, cwd] of this.busy) void server.abort(id, { directory: cwd }).catch(() => {});
  }

  killAll(): void {
    if (this.started !== null) killAgent(this.started.pid);
  }

  async closeAll(): Promise<void> {
    for (const folder of this.folders.values())
      void folder.then(
        (f) => f.stream.close(),
        () => {},
      );
    this.folders.clear();
    const server = await this.server?.catch(() => null);
    await server?.stop();
  }
}
