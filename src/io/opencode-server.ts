// `opencode serve`, started and spoken to by agentport (opencode 1.18.33,
// ground truth §6). The edge every serve-mode caller shares (the serve phase,
// bon's arms); the API below is kept stable.
//
//   const server = await startOpencodeServer({ bin, cwd, env });   // opencode-start.ts; OpencodeServerError on failure
//   const events = server.events(reducer, { onChunk });            // SSE `GET /event`, framed, bounded
//   await events.opened;
//   const session = await server.createSession({ title });         // POST /session
//   const fork = await server.forkSession(session.id);             // POST /session/{id}/fork
//   await server.moveSession(fork.id, directory);                  // POST /experimental/control-plane/move-session
//   await server.promptAsync(session.id, { text });                // POST /session/{id}/prompt_async → 204
//   await server.replyPermission(requestId, { reply: "reject", message });  // POST /permission/{id}/reply
//   await server.abort(session.id);                                // POST /session/{id}/abort
//   const history = await server.messages(session.id);             // GET /session/{id}/message
//   const again = await server.getSession(session.id);             // GET /session/{id} (404: http error)
//   await server.stop();                                           // the tree TERMed, KILLed after the grace
//
//   server.url, server.pid, server.startMs (spawn → listening), server.authorization (the header),
//   server.exited, server.exitStatus (null while it runs), server.stderrTail(); serveArgv(bin) (opencode-start.ts).
//
// - The server listens on 127.0.0.1 and a port the kernel picks (`--port 0`);
//   start-up waits for its "opencode server listening on URL" line on stdout
//   (bounded: `startTimeoutMs`, default 30 s; kind `start_timeout`).
// - Every server gets a random OPENCODE_SERVER_PASSWORD (known to the
//   redactor): opencode then answers 401 to any request without HTTP basic
//   auth `opencode:<password>`; every call here sends it.
// - The server is an AgentProcess (agent-process.ts), watched by agentport's
//   keeper: a `kill -9` of agentport still takes it and every tool process it started.
// - Every call takes `directory` (opencode's `?directory=`: the project the
//   request is about; default: the server's cwd), a `signal` and a
//   `timeoutMs` (default 30 s). Failures are OpencodeServerError with a
//   `kind`: not_found | cannot_start | start_timeout | exited (start-up),
//   http (a status other than the one expected; `status` set), transport
//   (no answer), protocol (an answer of the wrong shape).
// - The event stream is per directory as well: a session made with
//   `directory: D` is heard only on `events(sink, { directory: D })`.
// - Answers are checked with zod at this boundary; fields beyond those named
//   stay (loose objects).
import type { z } from "zod";
import { lazySchema } from "../core/lazy-schema.ts";
import type { LineSink } from "../core/frame.ts";
import { secrets } from "../core/redact.ts";
import { OpencodeServerError } from "./opencode-error.ts";
import { openEventStream, type EventOptions, type EventStream } from "./opencode-events.ts";
import type { AgentProcess } from "./agent-process.ts";
import type { ProcessRef } from "./proc.ts";

export { OpencodeServerError, type OpencodeServerErrorKind } from "./opencode-error.ts";

export interface CallOptions {
  /** The project folder the request is about (opencode's `?directory=`). */
  directory?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** One rule of opencode's permission list (`POST /session {permission}`). */
export interface PermissionRule {
  permission: string;
  pattern: string;
  action: "allow" | "ask" | "deny";
}

export const SessionInfoSchema = lazySchema((z) =>
  z.looseObject({
    id: z.string().regex(/^ses_/),
    directory: z.string().optional(),
    title: z.string().optional(),
    parentID: z.string().optional(),
  }),
);
export type SessionInfo = z.infer<typeof SessionInfoSchema>;

export const MessageSchema = lazySchema((z) =>
  z.looseObject({
    info: z.looseObject({ id: z.string(), role: z.string(), sessionID: z.string() }),
    parts: z.array(z.looseObject({ type: z.string() })),
  }),
);
export type SessionMessage = z.infer<typeof MessageSchema>;
const MessagesSchema = lazySchema((z) => z.array(MessageSchema));
/** What abort and a permission reply answer. */
const DoneSchema = lazySchema((z) => z.boolean());

export type PermissionReply = "once" | "always" | "reject";

export type { EventEnd, EventOptions, EventStream } from "./opencode-events.ts";

const DEFAULT_CALL_TIMEOUT_MS = 30_000;

export class OpencodeServer {
  constructor(
    /** `http://127.0.0.1:PORT`. */
    readonly url: string,
    /** From spawn to the listening line. */
    readonly startMs: number,
    private readonly agent: AgentProcess,
    private readonly auth: string,
  ) {}

  get pid(): number {
    return this.agent.pid;
  }

  get process(): ProcessRef {
    return this.agent.ref;
  }

  /** The `Authorization` header every request carries. */
  get authorization(): string {
    return this.auth;
  }

  /** The server exited (on its own, or stopped). */
  get exited(): Promise<number> {
    return this.agent.exited;
  }

  /** How the server ended, null while it runs. */
  get exitStatus(): { exitCode: number | null; signal: string | null } | null {
    return this.agent.status;
  }

  /** The server's last stderr lines (redacted). */
  stderrTail(): string {
    return secrets.text(this.agent.stderrTail());
  }

  createSession(
    body: { title?: string; parentID?: string; permission?: PermissionRule[] } = {},
    options: CallOptions = {},
  ): Promise<SessionInfo> {
    return this.call("POST", "/session", body, options, SessionInfoSchema);
  }

  getSession(id: string, options: CallOptions = {}): Promise<SessionInfo> {
    return this.call("GET", `/session/${encodeURIComponent(id)}`, undefined, options, SessionInfoSchema);
  }

  /** A new session holding `id`'s history (up to `messageID` when given). */
  forkSession(id: string, body: { messageID?: string } = {}, options: CallOptions = {}): Promise<SessionInfo> {
    return this.call("POST", `/session/${encodeURIComponent(id)}/fork`, body, options, SessionInfoSchema);
  }

  /** Start a turn; answered 204 at once. Its progress is on the event stream. */
  async promptAsync(
    id: string,
    body: { text: string; model?: { providerID: string; modelID: string }; agent?: string },
    options: CallOptions = {},
  ): Promise<void> {
    const request = {
      parts: [{ type: "text", text: body.text }],
      ...(body.model ? { model: body.model } : {}),
      ...(body.agent ? { agent: body.agent } : {}),
    };
    await this.call("POST", `/session/${encodeURIComponent(id)}/prompt_async`, request, options, null);
  }

  /**
   * Move a session to another project folder (`POST /experimental/control-plane/move-session`): its
   * tools run there from then on, and its events are heard on that folder's stream. A fork stays in
   * its source's folder whatever `directory` the fork names (opencode 1.18.33): bon's arms move theirs.
   */
  async moveSession(id: string, directory: string, options: CallOptions = {}): Promise<void> {
    await this.call("POST", "/experimental/control-plane/move-session", { sessionID: id, destination: { directory } }, options, null);
  }

  abort(id: string, options: CallOptions = {}): Promise<boolean> {
    return this.call("POST", `/session/${encodeURIComponent(id)}/abort`, undefined, options, DoneSchema);
  }

  replyPermission(requestId: string, body: { reply: PermissionReply; message?: string }, options: CallOptions = {}): Promise<boolean> {
    return this.call("POST", `/permission/${encodeURIComponent(requestId)}/reply`, body, options, DoneSchema);
  }

  messages(id: string, options: CallOptions = {}): Promise<SessionMessage[]> {
    return this.call("GET", `/session/${encodeURIComponent(id)}/message`, undefined, options, MessagesSchema);
  }

  /** `GET /event`: each event's `data` JSON as one line into `sink`, through the bounded framer. */
  events(sink: LineSink, options: EventOptions = {}): EventStream {
    return openEventStream(this.address("/event", options.directory), this.auth, sink, options);
  }

  /** TERM the server's tree, KILL what is left after a grace (tool processes outlive opencode's TERM, ground truth §7); the keeper forgets it. Idempotent. */
  async stop(): Promise<void> {
    await this.agent.stop("linger");
    await this.agent.finish();
  }

  // -- internals ---------------------------------------------------------------

  private address(path: string, directory: string | undefined): string {
    const url = new URL(path, this.url);
    if (directory !== undefined) url.searchParams.set("directory", directory);
    return url.href;
  }

  private async call<T>(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    options: CallOptions,
    schema: z.ZodType<T> | null,
  ): Promise<T> {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_CALL_TIMEOUT_MS);
    const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
    const headers: Record<string, string> = { authorization: this.auth, accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    let response: Response;
    try {
      response = await fetch(this.address(path, options.directory), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (error) {
      throw new OpencodeServerError(
        "transport",
        `opencode serve: ${method} ${path}: ${(error as Error).message}`,
        undefined,
        `${method} ${path}`,
      );
    }
    const text = await response.text().catch(() => "");
    const expected = schema === null ? 204 : 200;
    if (response.status !== expected) {
      throw new OpencodeServerError(
        "http",
        `opencode serve: ${method} ${path} answered ${response.status}${text ? `: ${text.slice(0, 200)}` : ""}`,
        response.status,
        `${method} ${path}`,
      );
    }
    if (schema === null) return undefined as T;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new OpencodeServerError("protocol", `opencode serve: ${method} ${path}: not JSON: ${text.slice(0, 120)}`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success)
      throw new OpencodeServerError(
        "protocol",
        `opencode serve: ${method} ${path}: ${parsed.error.issues[0]?.path.join(".") || "answer"}: ${parsed.error.issues[0]?.message ?? "unexpected shape"}`,
      );
    return parsed.data;
  }
}
