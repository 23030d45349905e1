// The driver: start an agent in its own process group, watched by the keeper
// (it dies with agentport); stream its stdout through the bounded framer into
// a reducer while its prompt is written to stdin; keep its stderr in a bounded
// file; make sure nothing of it is left running when we return.
import { isUtf8 } from "node:buffer";
import { closeSync } from "node:fs";
import { dirname } from "node:path";
import { LineFramer, type FrameStats } from "../core/frame.ts";
import type { ProcessOutcome, StoppedBy } from "../core/outcome.ts";
import type { Reducer } from "../core/reduction.ts";
import type { Supervisor } from "../core/supervisor.ts";
import { Collector } from "./chunks.ts";
import { becomeSubreaper, holdChild, reapAdopted, releaseChild } from "./subreaper.ts";
import { keeper } from "./keeper.ts";
import { treeBusy } from "./tree-cpu.ts";
import { FdSource, osPipe, streamSource, type ByteSource } from "./pipe.ts";
import { killTree, processStart, signalTree, type ProcessRef } from "./proc.ts";
import { AGENT_TAG, agentTag } from "./agent-tag.ts";
import { agentSandbox, sandboxArgv } from "./sandbox.ts";
import { StderrLog } from "./stderr-log.ts";
import { Watch } from "./watch.ts";

export { signalGroup } from "./proc.ts";

export interface DriveRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** Written to stdin while stdout is read, then closed; null gives the child /dev/null. */
  stdin: string | null;
  /** stderr goes here (bounded: stderr-log.ts), never to an unread pipe. */
  stderrFile: string;
  reducer: Reducer;
  maxLineBytes: number;
  /** Timeout, stall, budget and loop: checked on every chunk and every tick. */
  supervisor?: Supervisor;
  /** A supervisor warning (the budget in warn mode), said once. */
  onWarning?: (text: string) => void;
  /** The agent started: its pid, which is also its process group. */
  onSpawn?: (pid: number) => void;
  /** Between TERM and KILL of the group. */
  graceMs?: number;
  /** How long the child may stay alive once `settled()` says its stream is complete. */
  lingerMs?: number;
  /** Whether the reducer has seen the stream's end (every turn has its result). */
  settled?: () => boolean;
  /** Aborted on Ctrl-C of agentport. */
  signal?: AbortSignal;
}

export interface DriveResult extends ProcessOutcome {
  pid: number;
  /** Processes the agent left behind that agentport ended (its tree after it exited, and what detached from it). */
  reaped?: number;
  durationMs: number;
  framing: FrameStats;
}

export class SpawnError extends Error {
  constructor(
    message: string,
    readonly code: "not_found" | "not_executable" | "spawn_failed",
  ) {
    super(message);
  }
}

const DEFAULT_GRACE_MS = 2_000;
// A full collection every this many bytes of the agent's stdout (chunks.ts, Collector).
const FULL_COLLECT_EVERY_BYTES = 8 * 1024 * 1024;
// How long a stop waits for the reading to catch up with what the agent wrote (an agent that floods its stdout never lets it).
const CATCH_UP_MS = 250;

/**
 * Start `argv` in a process group of its own, watched by this agentport's
 * keeper; `stdout`: a pipe's write end of ours, else Bun's pipe. Under the
 * command's sandbox when there is one (sandbox.ts), `writable` folders
 * writable besides the cwd (the run folder).
 */
export function spawnAgent<In extends "pipe" | "ignore", Out extends "pipe" | number = "pipe">(
  command: string[],
  options: { cwd: string; env: Record<string, string | undefined>; stdin: In; stdout?: Out; writable?: string[] },
): { child: Bun.Subprocess<In, Out, "pipe">; agent: ProcessRef } {
  const sandbox = agentSandbox();
  const argv = sandbox === null ? command : sandboxArgv(sandbox, options.cwd, command, options.writable);
  // The keeper first: an agent is never without one for longer than it takes to name it.
  const guard = keeper();
  becomeSubreaper();
  let child: Bun.Subprocess<In, Out, "pipe">;
  try {
    child = Bun.spawn(argv, {
      cwd: options.cwd,
      // The tag that lets a later `cancel` prove the process is ours (agent-tag.ts).
      env: { ...options.env, [AGENT_TAG]: agentTag() },
      stdin: options.stdin,
      stdout: options.stdout ?? ("pipe" as Out),
      stderr: "pipe",
      // setsid(): the child leads its own group, so the group can be killed whole.
      detached: true,
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const bin = command[0] ?? "";
    if (code === "ENOENT") throw new SpawnError(`${bin}: not found`, "not_found");
    if (code === "EACCES") throw new SpawnError(`${bin}: not executable`, "not_executable");
    throw new SpawnError(`${bin}: could not start (${(error as Error).message})`, "spawn_failed");
  }
  const agent = { pid: child.pid, start: processStart(child.pid) ?? "" };
  holdChild(child.pid);
  guard?.watch(agent);
  return { child, agent };
}

/** The agent is finished with: kill what is left of its tree, here and by the keeper (which also knows its orphans); how many were left. */
export function reapAgent(agent: ProcessRef): number {
  const left = killTree(agent);
  releaseChild(agent.pid);
  keeper()?.done(agent.pid);
  return left;
}

/** The supervisor's stops and the abort (Ctrl-C, `agentport cancel`, whose reason is the verdict's), each told to `onStop` once; `release` when the run is over. */
export function watchStops(
  request: Pick<DriveRequest, "supervisor" | "reducer" | "onWarning" | "signal">,
  onStop: (why: StoppedBy, reason: string | undefined) => void,
  busy?: () => boolean,
): { watch: Watch | null; release(): void } {
  const watch =
    request.supervisor === undefined ? null : new Watch(request.supervisor, request.reducer, { onWarning: request.onWarning, onStop: (s) => onStop(s.kind, s.reason), busy });
  const onAbort = () => onStop("interrupt", typeof request.signal?.reason === "string" ? request.signal.reason : undefined);
  request.signal?.addEventListener("abort", onAbort, { once: true });
  if (request.signal?.aborted) onAbort();
  return {
    watch,
    release: () => {
      watch?.halt();
      request.signal?.removeEventListener("abort", onAbort);
    },
  };
}

/** TERM to the agent's whole tree, then KILL to what is left of it once the grace is over (a grandchild may outlive the leader). */
export async function endTree(agent: ProcessRef, exited: Promise<unknown>, grace: number): Promise<void> {
  const tree = signalTree(agent, "SIGTERM");
  const gone = await Promise.race([exited.then(() => true), Bun.sleep(grace).then(() => false)]);
  if (!gone) killTree(agent, tree);
}

/** stderr ends with the last process holding it; one that escaped is not waited for past the grace. */
export async function finishStderr(log: StderrLog, drained: Promise<unknown>, grace: number): Promise<void> {
  if (!(await Promise.race([drained.then(() => true), Bun.sleep(grace).then(() => false)]))) log.cancel();
  log.finish();
}

/** agentport failed mid-run: the agent stopped, what it left reaped, its stderr given up. */
export async function abandonAgent(stopped: Promise<void>, agent: ProcessRef, stderrLog: StderrLog): Promise<void> {
  await stopped;
  reapAgent(agent);
  stderrLog.cancel();
  stderrLog.finish();
}

/**
 * stdout is closed; the leader may still run (a linger that has not fired
 * yet holds no stdout). It is given the grace, then stopped; whatever it left
 * behind, in its group or not, goes with it.
 */
export async function settleAgent(exited: Promise<unknown>, agent: ProcessRef, grace: number, stop: () => Promise<void>, stopping: () => Promise<void> | null): Promise<number> {
  if (!(await Promise.race([exited.then(() => true), Bun.sleep(grace).then(() => false)]))) await stop();
  await exited;
  await stopping();
  // Whatever the leader left behind, in its group or not, goes with it; and what detached from it, handed to agentport: how many.
  return reapAgent(agent) + (await reapAdopted(grace, new Set([keeper()?.pid ?? 0])));
}

/** The driver's outcome once the agent is gone. */
export function driveResult(
  child: { pid: number; exitCode: number | null; signalCode: unknown },
  started: number,
  stop: { stoppedBy: StoppedBy | null; stopReason: string | undefined; finishedAtStop: boolean; reaped: number },
  stderrTail: string,
  framing: FrameStats,
): DriveResult {
  const signal = child.signalCode === null || child.signalCode === undefined ? null : String(child.signalCode);
  return { pid: child.pid, durationMs: Math.round(performance.now() - started), exitCode: child.exitCode, signal, ...stop, stderrTail, framing };
}

/** Write the prompt and close stdin, without holding up the reading of stdout. */
async function feed(sink: Bun.FileSink, text: string): Promise<void> {
  try {
    sink.write(text);
    await sink.end();
  } catch {
    // The child closed its stdin early (EPIPE); its stream says the rest.
  }
}

/** The agent started with its stdout on a pipe of ours where there is one (read into one reused buffer), else on Bun's. */
function spawnReading(request: DriveRequest): { child: Bun.Subprocess<"pipe" | "ignore", "pipe" | number, "pipe">; agent: ProcessRef; source: ByteSource } {
  const options = { cwd: request.cwd, env: request.env, stdin: request.stdin === null ? ("ignore" as const) : ("pipe" as const), writable: [dirname(request.stderrFile)] };
  const pipe = osPipe();
  if (pipe === null) {
    const { child, agent } = spawnAgent(request.argv, options);
    return { child, agent, source: streamSource(child.stdout) };
  }
  try {
    const { child, agent } = spawnAgent(request.argv, { ...options, stdout: pipe.writeFd });
    return { child, agent, source: new FdSource(pipe.readFd, child.exited) };
  } catch (error) {
    closeSync(pipe.readFd);
    throw error;
  } finally {
    // The child has its own copy; ours would keep the pipe from ever ending.
    closeSync(pipe.writeFd);
  }
}

export async function drive(request: DriveRequest): Promise<DriveResult> {
  const started = performance.now();
  const { child, agent, source } = spawnReading(request);
  const pid = child.pid;
  request.onSpawn?.(pid);
  const stderrLog = new StderrLog(request.stderrFile);
  const stderrDone = stderrLog.drain(child.stderr);
  const grace = request.graceMs ?? DEFAULT_GRACE_MS;
  let stoppedBy: StoppedBy | null = null;
  let stopReason: string | undefined;
  let finishedAtStop = false;
  let stopping: Promise<void> | null = null;

  let watch: Watch | null = null;
  const stop = (why: StoppedBy): Promise<void> => {
    if (stopping !== null) return stopping;
    watch?.halt();
    stoppedBy = why;
    stopping = (async () => {
      // A result already in the pipe is not lost to the race between the stop and the reading.
      await source.caughtUp(CATCH_UP_MS);
      finishedAtStop = request.reducer.finished();
      // The tree, not only the group: a grandchild may have made a group of its own.
      await endTree(agent, child.exited, grace);
      // A process that escaped the group may still hold stdout open: stop reading after one more grace.
      setTimeout(() => source.cancel(), grace).unref();
    })();
    return stopping;
  };

  const stops = watchStops(
    request,
    (why, reason) => {
      stopReason = reason ?? stopReason;
      void stop(why);
    },
    treeBusy(agent),
  );
  watch = stops.watch;

  // Not awaited before reading: an agent that writes a pipe's worth before it reads its prompt must not deadlock.
  const fed = request.stdin === null ? Promise.resolve() : feed(child.stdin as Bun.FileSink, request.stdin);

  const framer = new LineFramer(request.reducer, request.maxLineBytes, { isUtf8 });
  const collector = new Collector(source.fresh, FULL_COLLECT_EVERY_BYTES);
  let linger: Timer | null = null;
  try {
    for (;;) {
      const value = await source.read();
      if (value === null) break;
      framer.push(value);
      collector.read(value.length);
      watch?.activity();
      if (request.settled !== undefined && request.lingerMs !== undefined) {
        const settled = request.settled();
        if (settled && linger === null) linger = setTimeout(() => void stop("linger"), request.lingerMs);
        else if (!settled && linger !== null) {
          clearTimeout(linger);
          linger = null;
        }
      }
    }
    framer.end();
    request.reducer.streamEnded();
  } catch (error) {
    await abandonAgent(stop("internal"), agent, stderrLog);
    throw error;
  } finally {
    source.release();
    stops.release();
    if (linger !== null) clearTimeout(linger);
  }
  const reaped = await settleAgent(child.exited, agent, grace, () => stop(stoppedBy ?? "linger"), () => stopping);
  await fed;
  await finishStderr(stderrLog, stderrDone, grace);

  return driveResult(child, started, { stoppedBy, stopReason, finishedAtStop, reaped }, stderrLog.tail(), framer.stats);
}
