// Shared by the loopback stand-ins and the tests that drive the real agent CLIs against them:
// the scripted `Reply` type, temp dirs, and spawning a process with a stdin text.
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Token counts to report instead of the stand-in's estimate. */
export interface UsageOverride {
  input?: number;
  output?: number;
}

/** Optional on every reply: wait `delayMs` before answering; space streamed chunks by `chunkDelayMs`. */
export interface ReplyTiming {
  delayMs?: number;
  chunkDelayMs?: number;
}

/** `cut`: the stream ends after the text, before any finish reason and without `[DONE]` (chat-completions only). */
export type TextReply = ReplyTiming & { text: string; usage?: UsageOverride; cut?: boolean };
export type ToolCallReply = ReplyTiming & {
  toolCall: { name: string; arguments: object; id?: string };
  /** Text streamed before the tool call, in the same response. */
  text?: string;
  usage?: UsageOverride;
};
export type ErrorReply = ReplyTiming & {
  status: number;
  /** The error body: a string is the error message inside the API's error JSON; an object is sent as is. */
  body?: string | object;
  /** Seconds, sent as the `retry-after` header. */
  retryAfter?: number;
  /** More response headers (Anthropic's `anthropic-ratelimit-unified-*`). */
  headers?: Record<string, string>;
};
export type Reply = TextReply | ToolCallReply | ErrorReply;

/** A fixed list (requests beyond it repeat the last reply) or a function of the parsed body and the 1-based request number. */
export type Script<Req = RecordedRequest> = Reply[] | ((req: Req, n: number) => Reply);

/** The parsed JSON body of one API request. */
export type RecordedRequest = Record<string, any>;

/** Every HTTP request the stand-in saw (including claude's `HEAD /` preconnect and unknown paths). */
export interface HttpRecord {
  n: number;
  at: number;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
}

export interface Standin {
  /** OpenAI: `http://127.0.0.1:PORT/v1`; Anthropic: `http://127.0.0.1:PORT` (ANTHROPIC_BASE_URL takes no /v1). */
  url: string;
  port: number;
  /** Parsed bodies of the API calls, in arrival order. */
  requests: RecordedRequest[];
  /** All HTTP requests, in arrival order. */
  log: HttpRecord[];
  stop(): Promise<void>;
}

/** One model API, as a stand-in serves it: which requests are its calls, the script, and how it writes errors and replies. */
export interface StandinApi<R extends object> {
  /** The path's captures when the request is an API call (e.g. the model in gemini's path), else null. */
  route(method: string, path: string): string[] | null;
  script: R[] | ((req: RecordedRequest, n: number) => R);
  /** The API's error body for a status (a scripted error, a body that is not JSON, an unknown route). */
  error(reply: ErrorReply, requestId: string): Response;
  /** The streamed reply to the n-th call (1-based). */
  reply(reply: Exclude<R, ErrorReply>, req: RecordedRequest, n: number, route: string[], requestId: string): Response;
  /** What the base URL ends with: "/v1" where the agent adds only the method's path. */
  basePath: string;
}

/** Start a stand-in of `api` on 127.0.0.1 and an ephemeral port; every request is logged, every API call's body recorded. */
export function startStandin<R extends object>(api: StandinApi<R>): Standin {
  const requests: RecordedRequest[] = [];
  const log: HttpRecord[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      log.push({
        n: log.length + 1,
        at: Date.now(),
        method: request.method,
        path: url.pathname,
        query: url.search,
        headers: headersRecord(request.headers),
      });
      const requestId = `req_standin_${log.length}`;
      const route = api.route(request.method, url.pathname.replace(/\/+$/, ""));
      if (route !== null) {
        let body: RecordedRequest;
        try {
          body = (await request.json()) as RecordedRequest;
        } catch {
          return api.error({ status: 400, body: "standin: body is not JSON" }, requestId);
        }
        requests.push(body);
        const n = requests.length;
        const reply = pickReply(api.script, body, n);
        if ("delayMs" in reply && typeof reply.delayMs === "number") await sleep(reply.delayMs);
        if ("status" in reply) return api.error(reply as ErrorReply, requestId);
        return api.reply(reply as Exclude<R, ErrorReply>, body, n, route, requestId);
      }
      // claude preconnects with HEAD /.
      if (request.method === "HEAD") return new Response(null, { status: 200 });
      return api.error({ status: 404, body: `standin: no route ${request.method} ${url.pathname}` }, requestId);
    },
  });
  const port = server.port!;
  return { url: `http://127.0.0.1:${port}${api.basePath}`, port, requests, log, stop: () => server.stop(true) };
}

/** The route of a POST to exactly `path`. */
export const postTo = (path: string) => (method: string, p: string) => (method === "POST" && p === path ? [] : null);

export function pickReply<Req, R = Reply>(script: R[] | ((req: Req, n: number) => R), req: Req, n: number): R {
  if (typeof script === "function") return script(req, n);
  if (script.length === 0) throw new Error("empty stand-in script");
  return script[Math.min(n - 1, script.length - 1)]!;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Split a text into up to `parts` non-empty deltas. */
export function splitDeltas(text: string, parts = 3): string[] {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / parts));
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

/** A rough token estimate (4 characters a token), never 0. */
export const estimateTokens = (s: string) => Math.max(1, Math.ceil(s.length / 4));

export function headersRecord(h: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

/**
 * An SSE response whose chunks are written with `chunkDelayMs` between them; a client that hangs up just ends it.
 * With `keepOpen`, the stream is never closed after the chunks (a server that hangs mid-stream).
 */
export function sseResponse(chunks: string[], chunkDelayMs = 0, headers: Record<string, string> = {}, keepOpen = false): Response {
  const enc = new TextEncoder();
  let closed = false;
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const chunk of chunks) {
        if (closed) return;
        try {
          controller.enqueue(enc.encode(chunk));
        } catch {
          return;
        }
        await sleep(chunkDelayMs);
      }
      if (!closed && !keepOpen) {
        try {
          controller.close();
        } catch {}
      }
    },
    cancel() {
      closed = true;
    },
  });
  return new Response(body, {
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", ...headers },
  });
}

const madeDirs: string[] = [];

/** A fresh temp dir, with symlinks resolved (the agents report real paths as their cwd). */
export function tempDir(prefix = "agentport-standin-"): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  madeDirs.push(dir);
  return dir;
}

/** Remove every dir `tempDir` made (kept when AGENTPORT_KEEP_TMP is set, for a post-mortem). */
export function removeTempDirs(): void {
  if (process.env.AGENTPORT_KEEP_TMP) return;
  for (const dir of madeDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface Spawned {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** Non-empty stdout lines. */
  lines: string[];
  /** stdout lines that parse as JSON objects. */
  records: any[];
  ms: number;
  timedOut: boolean;
}

/**
 * Run `argv` in `cwd` with exactly `env` (nothing inherited), `stdin` written and then closed
 * (or /dev/null when undefined), killed with SIGKILL after `timeoutMs`.
 */
export async function spawnCollect(
  argv: string[],
  opts: { cwd: string; env: Record<string, string>; stdin?: string; timeoutMs?: number },
): Promise<Spawned> {
  const started = performance.now();
  const proc = Bun.spawn(argv, {
    cwd: opts.cwd,
    env: opts.env,
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, opts.timeoutMs ?? 45_000);
  const [stdout, stderr] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  clearTimeout(timer);
  const lines = stdout.split("\n").filter((l) => l.trim() !== "");
  const records: any[] = [];
  for (const line of lines) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object") records.push(v);
    } catch {}
  }
  return {
    code: proc.exitCode,
    signal: proc.signalCode == null ? null : String(proc.signalCode),
    stdout,
    stderr,
    lines,
    records,
    ms: Math.round(performance.now() - started),
    timedOut,
  };
}

/** PATH for the agents: the caller's PATH (node for pi, sh/coreutils for tools), or a sane default. */
export function basePath(): string {
  return process.env.PATH || "/usr/local/bin:/usr/bin:/bin";
}
