// Starting `opencode serve` (the serve client's first step, opencode-server.ts):
// loopback, a kernel-picked port, a random password known to the redactor;
// start-up waits, bounded, for the "listening on URL" line on stdout.
import { randomBytes } from "node:crypto";
import { isUtf8 } from "node:buffer";
import type { Env } from "../core/env.ts";
import { LineFramer, type LineSink } from "../core/frame.ts";
import { secrets } from "../core/redact.ts";
import { OpencodeServerError } from "./opencode-error.ts";
import { OpencodeServer } from "./opencode-server.ts";
import { AgentProcess, SpawnError } from "./agent-process.ts";

export interface StartOptions {
  bin: string;
  /** The server's folder: the default `directory` of every request. */
  cwd: string;
  env: Env;
  startTimeoutMs?: number;
  /** The server's stderr (bounded); default: kept in memory only. */
  stderrFile?: string;
  /** Between TERM and KILL of its tree (default 2 s). */
  graceMs?: number;
}

const DEFAULT_START_TIMEOUT_MS = 30_000;
const LISTENING = /opencode server listening on (http:\/\/\S+)/;
/** opencode's default user for basic auth; set explicitly so an inherited OPENCODE_SERVER_USERNAME cannot differ. */
const USERNAME = "opencode";

/** The server's command line: loopback only, a port the kernel picks. */
export const serveArgv = (bin: string): string[] => [bin, "serve", "--hostname", "127.0.0.1", "--port", "0"];

/** Start `opencode serve` and wait for its listening line. */
export async function startOpencodeServer(options: StartOptions): Promise<OpencodeServer> {
  const password = randomBytes(24).toString("base64url");
  secrets.addValues([password]);
  const auth = `Basic ${Buffer.from(`${USERNAME}:${password}`).toString("base64")}`;
  secrets.addValues([auth.slice("Basic ".length)]);
  const argv = serveArgv(options.bin);
  const env = { ...options.env, OPENCODE_SERVER_PASSWORD: password, OPENCODE_SERVER_USERNAME: USERNAME };
  const started = performance.now();
  let agent: AgentProcess;
  try {
    agent = AgentProcess.spawn({
      argv,
      cwd: options.cwd,
      env,
      stdin: "ignore",
      stderrFile: options.stderrFile ?? "/dev/null",
      graceMs: options.graceMs,
    });
  } catch (error) {
    if (error instanceof SpawnError)
      throw new OpencodeServerError(error.code === "not_found" ? "not_found" : "cannot_start", error.message);
    throw error;
  }
  const url = await listeningUrl(agent, options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS).catch(async (error: unknown) => {
    await agent.abandon();
    const tail = secrets.text(agent.stderrTail()).trim().split("\n").slice(-3).join(" | ");
    if (error instanceof OpencodeServerError)
      throw new OpencodeServerError(error.code, tail ? `${error.message}; stderr: ${tail}` : error.message);
    throw error;
  });
  return new OpencodeServer(url, Math.round(performance.now() - started), agent, auth);
}

/** Read stdout until the listening line (then keep draining it: nothing more is expected there). */
async function listeningUrl(agent: AgentProcess, timeoutMs: number): Promise<string> {
  let found: ((url: string) => void) | null = null;
  const url = new Promise<string>((res) => (found = res));
  const sink: LineSink = {
    line: (text) => {
      const m = LISTENING.exec(text);
      if (m?.[1] !== undefined) found?.(m[1]);
    },
    oversize: () => {},
    framingError: () => {},
    unterminated: (text) => sink.line(text),
  };
  const framer = new LineFramer(sink, 64 * 1024, { isUtf8 });
  const drained = (async () => {
    for (let chunk = await agent.stdout.read(); chunk !== null; chunk = await agent.stdout.read()) framer.push(chunk);
    framer.end();
  })().catch(() => {});
  let timer: Timer | undefined;
  const timedOut = new Promise<never>((_, rej) => {
    timer = setTimeout(
      () =>
        rej(
          new OpencodeServerError("start_timeout", `opencode serve did not say it was listening within ${Math.round(timeoutMs / 1000)} s`),
        ),
      timeoutMs,
    );
  });
  const exited = agent.exited.then((code) =>
    drained.then(() => Promise.reject(new OpencodeServerError("exited", `opencode serve exited (code ${code}) before it was listening`))),
  );
  try {
    return await Promise.race([url, timedOut, exited]);
  } finally {
    clearTimeout(timer);
  }
}
