// agentport as an ACP agent (`agentport acp`): the protocol side, as a sink the
// bounded framer feeds one JSON-RPC message a line. It checks every message
// (initialize first, known sessions, one prompt at a time per session, ids not
// reused while open), answers what is wrong with one JSON-RPC error, and hands
// what is right to its host: the host declares sessions in the ledger and runs
// the prompts. Hostile input (an oversize line, bad JSON, deep JSON, unknown
// methods) is answered, never thrown. It never starts a process or reads a file.
import type { LineSink } from "../frame.ts";
import { objectOf, type Json } from "../record.ts";
import { clean } from "../text.ts";
import type { PermissionAsker } from "./permission.ts";
import {
  ACP_PROTOCOL_VERSION,
  RPC_ERRORS,
  type PermissionOutcome,
  type PromptResult,
  type RpcError,
  type RpcId,
  type SessionUpdate,
} from "./protocol.ts";
import { checkParams, KNOWN_METHODS, type Checked } from "./server-params.ts";

export type HostAnswer<T> = { ok: true; result: T } | { ok: false; error: RpcError };

/** What the server asks of the world: sessions and prompts. */
export interface AcpServerHost {
  newSession(cwd: string): Promise<HostAnswer<{ sessionId: string }>>;
  /** A session of the ledger, in its birth folder: checked by the host. */
  loadSession(sessionId: string, cwd: string): Promise<HostAnswer<null>>;
  /** `ask`: the client asked a permission request of the run's agent (null: it gave no usable answer). */
  prompt(sessionId: string, text: string, update: (update: SessionUpdate) => void, ask: PermissionAsker): Promise<HostAnswer<PromptResult>>;
  cancel(sessionId: string): void;
}

export interface AcpServerInfo {
  name: string;
  version: string;
}

const MAX_OPEN_REQUESTS = 64;

export class AcpServer implements LineSink {
  private initialized = false;
  private readonly sessions = new Set<string>();
  private readonly busy = new Set<string>();
  private readonly open = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  /** agentport's own requests to the client (permission requests), by id, until answered. */
  private readonly asked = new Map<string, (outcome: PermissionOutcome | null) => void>();
  private nextAsk = 1;
  readonly counts = { messages: 0, errors: 0, ignored_notifications: 0, stray_responses: 0 };

  constructor(
    private readonly host: AcpServerHost,
    private readonly info: AcpServerInfo,
    private readonly write: (message: Json) => void,
  ) {}

  /** Every prompt still running: the caller waits for them before it exits. */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.all([...this.running]);
  }

  /** The client went away: every running prompt is cancelled, every question to it unanswered. */
  cancelAll(): void {
    for (const id of this.busy) this.host.cancel(id);
    for (const resolve of this.asked.values()) resolve(null);
    this.asked.clear();
  }

  // -- LineSink ------------------------------------------------------------------

  line(text: string): void {
    this.counts.messages += 1;
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      // Bad JSON, or JSON nested too deep for the parser: the same answer.
      this.error(null, RPC_ERRORS.parse, "parse error: the line is not JSON (one JSON-RPC 2.0 message per line)");
      return;
    }
    const message = objectOf(value);
    const id = message === null ? null : idOf(message.id);
    if (message === null || message.jsonrpc !== "2.0") {
      this.error(id, RPC_ERRORS.invalidRequest, 'invalid request: not a JSON-RPC 2.0 message (an object with "jsonrpc": "2.0")');
      return;
    }
    const method = typeof message.method === "string" ? message.method : null;
    if (method === null) {
      if ("result" in message || "error" in message) this.answered(id, message);
      else this.error(id, RPC_ERRORS.invalidRequest, 'invalid request: no "method"');
      return;
    }
    if (message.id === undefined) {
      this.notification(method, objectOf(message.params) ?? {});
      return;
    }
    if (id === null) {
      this.error(null, RPC_ERRORS.invalidRequest, "invalid request: the id must be a string or an integer");
      return;
    }
    this.request(id, method, message.params);
  }

  oversize(limit: number): void {
    this.error(null, RPC_ERRORS.parse, `parse error: a line over ${limit} bytes was dropped; send smaller messages`);
  }

  framingError(what: string): void {
    this.error(null, RPC_ERRORS.parse, `parse error: ${clean(what, 200)}`);
  }

  unterminated(text: string): void {
    this.line(text);
  }

  // -- messages ------------------------------------------------------------------

  private notification(method: string, params: Json): void {
    if (method === "session/cancel" && typeof params.sessionId === "string" && this.busy.has(params.sessionId)) {
      this.host.cancel(params.sessionId);
      return;
    }
    // A notification gets no answer, whatever it is.
    this.counts.ignored_notifications += 1;
  }

  private request(id: RpcId, method: string, rawParams: unknown): void {
    const key = `${typeof id}:${id}`;
    if (this.open.has(key)) {
      this.error(id, RPC_ERRORS.invalidRequest, `invalid request: id ${clean(String(id), 60)} is still in use by an open request`);
      return;
    }
    if (this.open.size >= MAX_OPEN_REQUESTS) {
      this.error(id, RPC_ERRORS.invalidRequest, `invalid request: ${MAX_OPEN_REQUESTS} requests are open already; wait for their answers`);
      return;
    }
    const params = objectOf(rawParams);
    if (method === "initialize") {
      this.initialize(id, params);
      return;
    }
    if (!KNOWN_METHODS.has(method)) {
      this.error(id, RPC_ERRORS.methodNotFound, `method not found: agentport does not serve ${clean(method, 60)}`);
      return;
    }
    if (!this.initialized) {
      this.error(id, RPC_ERRORS.invalidRequest, `invalid request: ${method} before initialize; send initialize first`);
      return;
    }
    if (params === null) {
      this.error(id, RPC_ERRORS.invalidParams, `invalid params: ${method} takes an object of params`);
      return;
    }
    const checked = checkParams(method, params, this.sessions, this.busy);
    if (!checked.ok) {
      this.error(id, checked.error.code, checked.error.message);
      return;
    }
    this.open.add(key);
    const done = this.serve(id, method, checked.value).finally(() => {
      this.open.delete(key);
      this.running.delete(done);
    });
    this.running.add(done);
  }

  private initialize(id: RpcId, params: Json | null): void {
    if (params === null || typeof params.protocolVersion !== "number") {
      this.error(id, RPC_ERRORS.invalidParams, "invalid params: initialize needs protocolVersion (a number)");
      return;
    }
    this.initialized = true;
    this.reply(id, {
      // The client's version when it is ours or newer, else ours: the client decides whether it can go on.
      protocolVersion: ACP_PROTOCOL_VERSION,
      agentCapabilities: {
        loadSession: true,
        promptCapabilities: { image: false, audio: false, embeddedContext: false },
        mcpCapabilities: { http: false, sse: false },
      },
      agentInfo: { name: this.info.name, title: "agentport", version: this.info.version },
      authMethods: [],
    });
  }

  private async serve(id: RpcId, method: string, p: Checked): Promise<void> {
    let answer: HostAnswer<unknown>;
    try {
      answer = await this.dispatch(method, p);
    } catch (error) {
      answer = {
        ok: false,
        error: {
          code: RPC_ERRORS.internal,
          message: `internal error: ${clean(error instanceof Error ? error.message : String(error), 300)}`,
        },
      };
    }
    if (answer.ok) this.reply(id, answer.result);
    else this.error(id, answer.error.code, answer.error.message, answer.error.data);
  }

  private async dispatch(method: string, p: Checked): Promise<HostAnswer<unknown>> {
    switch (method) {
      case "session/new": {
        const made = await this.host.newSession(p.cwd);
        if (made.ok) this.sessions.add(made.result.sessionId);
        return made;
      }
      case "session/load": {
        const loaded = await this.host.loadSession(p.sessionId, p.cwd);
        if (loaded.ok) this.sessions.add(p.sessionId);
        return loaded;
      }
      default: {
        this.busy.add(p.sessionId);
        try {
          const update = (u: SessionUpdate) =>
            this.write({ jsonrpc: "2.0", method: "session/update", params: { sessionId: p.sessionId, update: u } });
          return await this.host.prompt(p.sessionId, p.text, update, (request) => this.ask(p.sessionId, request));
        } finally {
          this.busy.delete(p.sessionId);
        }
      }
    }
  }

  /** Asks the client one permission request of a session's agent. */
  private ask(sessionId: string, request: { toolCall: Json; options: unknown }): Promise<PermissionOutcome | null> {
    const id = `agentport-${this.nextAsk++}`;
    return new Promise((resolve) => {
      this.asked.set(id, resolve);
      this.write({
        jsonrpc: "2.0",
        id,
        method: "session/request_permission",
        params: { sessionId, toolCall: request.toolCall, options: request.options },
      });
    });
  }

  /** The client's answer to one of agentport's requests; any other response is stray. */
  private answered(id: RpcId | null, message: Json): void {
    const resolve = typeof id === "string" ? this.asked.get(id) : undefined;
    if (resolve === undefined) {
      this.counts.stray_responses += 1;
      return;
    }
    this.asked.delete(id as string);
    const outcome = objectOf(objectOf(message.result)?.outcome);
    if (outcome?.outcome === "selected" && typeof outcome.optionId === "string")
      resolve({ outcome: { outcome: "selected", optionId: outcome.optionId } });
    else if (outcome?.outcome === "cancelled") resolve({ outcome: { outcome: "cancelled" } });
    else resolve(null);
  }

  private reply(id: RpcId, result: unknown): void {
    this.write({ jsonrpc: "2.0", id, result: result ?? null });
  }

  private error(id: RpcId | null, code: number, message: string, data?: unknown): void {
    this.counts.errors += 1;
    this.write({ jsonrpc: "2.0", id, error: data === undefined ? { code, message } : { code, message, data } });
  }
}

function idOf(value: unknown): RpcId | null {
  if (typeof value === "string") return value.length <= 200 ? value : null;
  return typeof value === "number" && Number.isSafeInteger(value) ? value : null;
}
