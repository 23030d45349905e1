// The one-shot driver: start an agent (agent-process.ts), stream its stdout
// through the bounded framer into a reducer while its prompt is written to
// stdin, stop it when the supervisor or an abort says so, and make sure
// nothing of it is left running when we return.
import { isUtf8 } from "node:buffer";
import { LineFramer, type FrameStats } from "../core/frame.ts";
import type { ProcessOutcome, StoppedBy } from "../core/outcome.ts";
import type { Reducer } from "../core/reduction.ts";
import type { Supervisor } from "../core/supervisor.ts";
import { AgentProcess } from "./agent-process.ts";
import { Collector } from "./chunks.ts";
import { treeBusy } from "./tree-cpu.ts";
import { Watch } from "./watch.ts";

export { SpawnError } from "./agent-process.ts";

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
  /** Between TERM and KILL of the agent's tree. */
  graceMs?: number;
  /** How long the child may stay alive once `settled()` says its stream is complete. */
  lingerMs?: number;
  /** Whether the reducer has seen the stream's end (every turn has its result). */
  settled?: () => boolean;
  /** Aborted on Ctrl-C of agentport. */
  signal?: AbortSignal;
  /** Instead of a prompt on stdin: a conversation of lines on it (ACP), which ends the run when it is over. */
  conversation?: Conversation;
}

/** A client that speaks to the agent over its stdin for the whole run (ACP). */
export interface Conversation {
  start(write: (message: Record<string, unknown>) => void): void;
  /** Nothing more to ask: stdin is closed, and the agent is given the linger to go. */
  over(): boolean;
  /** Ask the agent to end its turn; false when there is nothing to cancel. */
  cancel(): boolean;
  /** How long a cancelled turn is given to come back before the tree is stopped. */
  cancelGraceMs: number;
}

export interface DriveResult extends ProcessOutcome {
  pid: number;
  /** Processes the agent left behind that agentport ended (its tree after it exited, and what detached from it). */
  reaped?: number;
  durationMs: number;
  framing: FrameStats;
}

// How long a stop waits for the reading to catch up with what the agent wrote (an agent that floods its stdout never lets it).
const CATCH_UP_MS = 250;
// A full collection every this many bytes of the agent's stdout (chunks.ts, Collector).
const FULL_COLLECT_EVERY_BYTES = 8 * 1024 * 1024;
const POLL_MS = 20;

/** The supervisor's stops and the abort (Ctrl-C, `agentport cancel`, whose reason is the verdict's), each told to `onStop` once; `release` when the run is over. */
function watchStops(
  request: Pick<DriveRequest, "supervisor" | "reducer" | "onWarning" | "signal">,
  onStop: (why: StoppedBy, reason: string | undefined) => void,
  busy?: () => boolean,
): { watch: Watch | null; release(): void } {
  const watch =
    request.supervisor === undefined
      ? null
      : new Watch(request.supervisor, request.reducer, { onWarning: request.onWarning, onStop: (s) => onStop(s.kind, s.reason), busy });
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

/** The driver's outcome once the agent is gone. */
function driveResult(
  agent: AgentProcess,
  started: number,
  stop: { stoppedBy: StoppedBy | null; stopReason: string | undefined; finishedAtStop: boolean; reaped: number },
  framing: FrameStats,
): DriveResult {
  const status = agent.status ?? { exitCode: null, signal: null };
  return {
    pid: agent.pid,
    durationMs: Math.round(performance.now() - started),
    ...status,
    ...stop,
    stderrTail: agent.stderrTail(),
    framing,
  };
}

export async function drive(request: DriveRequest): Promise<DriveResult> {
  const started = performance.now();
  const talk = request.conversation;
  const agent = AgentProcess.spawn({
    argv: request.argv,
    cwd: request.cwd,
    env: request.env,
    stdin: request.stdin === null && talk === undefined ? "ignore" : "pipe",
    stderrFile: request.stderrFile,
    graceMs: request.graceMs,
    bunStdout: talk !== undefined,
  });
  const source = agent.stdout;
  request.onSpawn?.(agent.pid);
  let stopReason: string | undefined;
  let finishedAtStop = false;
  let watch: Watch | null = null;
  agent.whenStopping(async () => {
    watch?.halt();
    // A result already in the pipe is not lost to the race between the stop and the reading.
    await source.caughtUp(CATCH_UP_MS);
    finishedAtStop = request.reducer.finished();
    if (talk !== undefined) await politeStop(agent, talk, !finishedAtStop && agent.stoppedBy !== "internal");
  });
  const stops = watchStops(
    request,
    (why, reason) => {
      stopReason = reason ?? stopReason;
      void agent.stop(why);
    },
    treeBusy(agent.ref),
  );
  watch = stops.watch;

  // Not awaited before reading: an agent that writes a pipe's worth before it reads its prompt must not deadlock.
  const fed = request.stdin === null ? Promise.resolve() : agent.feed(request.stdin);
  talk?.start((message) => agent.write(`${JSON.stringify(message)}\n`));

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
      if (talk?.over() && linger === null) {
        // Nothing more to ask: the agent ends with its stdin; one that does not is ended after the linger.
        void agent.endStdin();
        linger = setTimeout(() => void agent.stop("linger"), request.lingerMs ?? agent.grace);
      }
      if (request.settled !== undefined && request.lingerMs !== undefined) {
        const settled = request.settled();
        if (settled && linger === null) linger = setTimeout(() => void agent.stop("linger"), request.lingerMs);
        else if (!settled && linger !== null) {
          clearTimeout(linger);
          linger = null;
        }
      }
    }
    framer.end();
    request.reducer.streamEnded();
  } catch (error) {
    await agent.abandon();
    throw error;
  } finally {
    source.release();
    stops.release();
    if (linger !== null) clearTimeout(linger);
  }
  await agent.endStdin();
  // A linger that has not fired yet holds no stdout: the leader is given the grace, then stopped.
  const reaped = await agent.finish();
  await fed;
  // Finished at the stop only if what came after did not reopen the run (pi's auto_retry_start after an attempt's agent_end).
  const finished = finishedAtStop && request.reducer.finished();
  return driveResult(agent, started, { stoppedBy: agent.stoppedBy, stopReason, finishedAtStop: finished, reaped }, framer.stats);
}

/** Ask first (the agent ends its own turn and keeps its session whole), then close its stdin and give it a moment to go. */
async function politeStop(agent: AgentProcess, talk: Conversation, ask: boolean): Promise<void> {
  if (ask && talk.cancel()) {
    let gone = false;
    void agent.exited.then(() => (gone = true));
    const deadline = performance.now() + talk.cancelGraceMs;
    while (!talk.over() && !gone && performance.now() < deadline) await Bun.sleep(POLL_MS);
  }
  await agent.endStdin();
  await Promise.race([agent.exited, Bun.sleep(Math.min(agent.grace, 500))]);
}
