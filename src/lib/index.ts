// agentport as a library, for Bun and Node ≥ 20: the reducers and the judge
// of a live run over a captured stream (`reduce`, `replay`), a run of the
// agentport binary (`run`), and the JSON Schemas of what it prints
// (`schemas`). Pure but for `run`; loads no zod.
import { spawn } from "node:child_process";
import { isUtf8 } from "node:buffer";
import { createRequire } from "node:module";
import { DEFAULT_MAX_LINE_BYTES, LineFramer } from "../core/frame.ts";
import { replayer } from "../core/replayer.ts";
import { EXIT as CORE_EXIT } from "../core/exit.ts";
import { SCHEMA_VERSION as CORE_SCHEMA_VERSION, exitCodeFor as coreExitCode } from "../core/verdict.ts";
import { binaryPath } from "./platform.ts";
import type { AgentName, ProgressEvent, ProgressRecord, Verdict } from "./types.ts";
import verdict from "../../schemas/verdict.json" with { type: "json" };
import progress from "../../schemas/progress.json" with { type: "json" };
import harvest from "../../schemas/harvest.json" with { type: "json" };
import session from "../../schemas/session.json" with { type: "json" };
import phase from "../../schemas/phase.json" with { type: "json" };
import task from "../../schemas/task.json" with { type: "json" };
import result from "../../schemas/result.json" with { type: "json" };
import worker from "../../schemas/worker.json" with { type: "json" };
import queue from "../../schemas/queue.json" with { type: "json" };
import config from "../../schemas/config.json" with { type: "json" };

export type * from "./types.ts";

/** The exit codes (README "Exit codes"). */
export const EXIT: Readonly<{ ok: 0; failed: 1; usage: 2; refused: 3; supervision: 4; environment: 5; interrupted: 130 }> = CORE_EXIT;
/** The verdict's and each progress record's `schema_version` this library reads and writes. */
export const SCHEMA_VERSION: number = CORE_SCHEMA_VERSION;

export type SchemaName = "verdict" | "progress" | "harvest" | "session" | "phase" | "task" | "result" | "worker" | "queue" | "config";
/** The JSON Schemas (draft 2020-12) of the contract, as `agentport schema NAME` prints them. */
export const schemas: Readonly<Record<SchemaName, Readonly<Record<string, unknown>>>> = {
  verdict,
  progress,
  harvest,
  session,
  phase,
  task,
  result,
  worker,
  queue,
  config,
};

/** The exit code agentport gives a verdict (README "Exit codes"). */
export function exitCodeFor(verdict: Verdict): number {
  return coreExitCode(verdict);
}

export interface ReduceOptions {
  /** Tool paths in progress details are shown relative to this folder. */
  cwd?: string;
  /** Each progress event, as the stream is read. */
  onProgress?: (event: ProgressEvent) => void;
  /** A longer line is counted and skipped, as in a live run (default 8 MiB). */
  maxLineBytes?: number;
}

/** A stream being reduced: push its bytes as they come, then end it for the verdict. */
export interface Reduction {
  push(chunk: Uint8Array | string): void;
  /** The stream has ended: the verdict the live run would give, less what only a process tells (exit code, signal, stderr). */
  end(): Verdict;
}

/** Reduce an agent's stream (claude stream-json, pi --mode json or RPC, codex exec --json, gemini stream-json, opencode run --format json or --serve events, an ACP agent's stdout) chunk by chunk. */
export function reduce(agent: AgentName, options: ReduceOptions = {}): Reduction {
  const replaying = replayer(agent, options.cwd ?? "", options.onProgress);
  const framer = new LineFramer(replaying.reducer, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES, { isUtf8 });
  const encoder = new TextEncoder();
  let verdict: Verdict | null = null;
  return {
    push(chunk) {
      if (verdict !== null) throw new Error("agentport: push after end");
      framer.push(typeof chunk === "string" ? encoder.encode(chunk) : chunk);
    },
    end() {
      if (verdict === null) {
        framer.end();
        replaying.reducer.streamEnded();
        verdict = replaying.verdict();
      }
      return verdict;
    },
  };
}

/** A captured stream: its text or bytes, its lines (one record each), or chunks as they come (a Node stream, a fetch body, a file stream). */
export type StreamSource = string | Uint8Array | readonly string[] | Iterable<Uint8Array | string> | AsyncIterable<Uint8Array | string>;

/** The verdict of a captured stream, as `agentport replay --agent AGENT` gives it. */
export async function replay(source: StreamSource, agent: AgentName, options: ReduceOptions = {}): Promise<Verdict> {
  const reduction = reduce(agent, options);
  if (typeof source === "string" || source instanceof Uint8Array) reduction.push(source);
  else if (Array.isArray(source)) for (const line of source as readonly string[]) reduction.push(line.endsWith("\n") ? line : `${line}\n`);
  else if (Symbol.asyncIterator in source) for await (const chunk of source as AsyncIterable<Uint8Array | string>) reduction.push(chunk);
  else for (const chunk of source as Iterable<Uint8Array | string>) reduction.push(chunk);
  return reduction.end();
}

export interface RunOptions {
  prompt: string;
  /** The agent (else agentport.json's default_agent, else claude). */
  agent?: AgentName;
  /** A named agent of agentport.json (`--as`). */
  as?: string;
  model?: string;
  /** Where the agent works (default: this process's folder). */
  cwd?: string;
  /** Seconds (`--timeout`). */
  timeout?: number;
  /** More flags of `agentport run`, before the prompt (`["--tools", "Read,Grep"]`). */
  args?: readonly string[];
  /** Added to this process's environment. */
  env?: Record<string, string | undefined>;
  /** The agentport binary (default: the one the platform package installed). */
  bin?: string;
  /** Each `--progress json` record as it comes, the verdict's last. */
  onProgress?: (record: ProgressRecord) => void;
  /** Aborting sends the run SIGINT: it ends as "aborted" (exit 130). */
  signal?: AbortSignal;
}

export interface RunResult {
  verdict: Verdict;
  exitCode: number;
}

function defaultBinary(): string {
  const found = binaryPath(createRequire(import.meta.url).resolve);
  if ("error" in found) throw new Error(`agentport: ${found.error}`);
  return found.path;
}

/** Run `agentport run --json` with the prompt on stdin; resolves with its verdict and exit code (a failed run resolves too). */
export function run(options: RunOptions): Promise<RunResult> {
  const flags: string[] = [];
  if (options.agent !== undefined) flags.push("--agent", options.agent);
  if (options.as !== undefined) flags.push("--as", options.as);
  if (options.model !== undefined) flags.push("--model", options.model);
  if (options.timeout !== undefined) flags.push("--timeout", String(options.timeout));
  const argv = ["run", ...flags, "--json", "--progress", options.onProgress ? "json" : "off", ...(options.args ?? []), "-"];
  const child = spawn(options.bin ?? defaultBinary(), argv, {
    cwd: options.cwd,
    env: { ...process.env, ...options.env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const abort = () => child.kill("SIGINT");
  options.signal?.addEventListener("abort", abort, { once: true });
  const out: Buffer[] = [];
  let tail = "";
  let pending = "";
  child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    tail = (tail + chunk).slice(-2000);
    if (!options.onProgress) return;
    const lines = (pending + chunk).split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) if (line.startsWith("{")) options.onProgress(JSON.parse(line) as ProgressRecord);
  });
  child.stdin.end(options.prompt);
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      options.signal?.removeEventListener("abort", abort);
      const text = Buffer.concat(out).toString("utf8").trim();
      if (!text.startsWith("{"))
        return reject(new Error(`agentport run printed no verdict (exit ${code ?? signal}): ${tail.trim().slice(-400)}`));
      resolve({ verdict: JSON.parse(text) as Verdict, exitCode: code ?? 1 });
    });
  });
}
