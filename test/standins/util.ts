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

export function pickReply<Req>(script: Script<Req>, req: Req, n: number): Reply {
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
  h.forEach((v, k) => (out[k] = v));
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
