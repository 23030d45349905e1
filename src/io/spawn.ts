// The driver: start an agent in its own process group, stream its stdout
// through the bounded framer into a reducer, keep its stderr in a file, and
// make sure nothing of it is left running when we return.
import { LineFramer, type FrameStats } from "../core/frame.ts";
import type { ProcessOutcome, StoppedBy } from "../core/outcome.ts";
import type { Reducer } from "../core/reduction.ts";
import type { Supervisor } from "../core/supervisor.ts";
import { readTail } from "./tail.ts";
import { Watch } from "./watch.ts";

export interface DriveRequest {
  argv: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  /** Written to stdin, which is then closed; null gives the child /dev/null. */
  stdin: string | null;
  /** stderr goes here, never to an unread pipe. */
  stderrFile: string;
  reducer: Reducer;
  maxLineBytes: number;
  /** Timeout, stall, budget and loop: checked on every chunk and every tick. */
  supervisor?: Supervisor;
  /** A supervisor warning (the budget in warn mode), said once. */
  onWarning?: (text: string) => void;
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

/** Signal the child's whole process group; a group already gone is no error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: nobody left in the group.
  }
}

export async function drive(request: DriveRequest): Promise<DriveResult> {
  const started = performance.now();
  let child: Bun.Subprocess<"pipe" | "ignore", "pipe", Bun.BunFile>;
  try {
    child = Bun.spawn(request.argv, {
      cwd: request.cwd,
      env: request.env,
      stdin: request.stdin === null ? "ignore" : "pipe",
      stdout: "pipe",
      stderr: Bun.file(request.stderrFile),
      // setsid(): the child leads its own group, so the group can be killed whole.
      detached: true,
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const bin = request.argv[0] ?? "";
    if (code === "ENOENT") throw new SpawnError(`${bin}: not found`, "not_found");
    if (code === "EACCES") throw new SpawnError(`${bin}: not executable`, "not_executable");
    throw new SpawnError(`${bin}: could not start (${(error as Error).message})`, "spawn_failed");
  }
  const pid = child.pid;
  const grace = request.graceMs ?? DEFAULT_GRACE_MS;
  let stoppedBy: StoppedBy | null = null;
  let stopReason: string | undefined;
  let finishedAtStop = false;
  let stopping: Promise<void> | null = null;

  const reader = child.stdout.getReader();
  let watch: Watch | null = null;
  const stop = (why: StoppedBy): Promise<void> => {
    if (stopping !== null) return stopping;
    watch?.halt();
    stoppedBy = why;
    finishedAtStop = request.reducer.finished();
    stopping = (async () => {
      signalGroup(pid, "SIGTERM");
      const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(grace).then(() => false)]);
      // KILL the group in any case: a grandchild may have outlived the leader.
      if (!exited) signalGroup(pid, "SIGKILL");
      // A process that escaped the group may still hold stdout open: stop reading after one more grace.
      setTimeout(() => void reader.cancel().catch(() => {}), grace).unref();
    })();
    return stopping;
  };

  if (request.supervisor !== undefined) {
    watch = new Watch(request.supervisor, request.reducer, {
      onWarning: request.onWarning,
      onStop: (s) => {
        stopReason = s.reason;
        void stop(s.kind);
      },
    });
  }
  const onAbort = () => void stop("interrupt");
  request.signal?.addEventListener("abort", onAbort, { once: true });
  if (request.signal?.aborted) onAbort();

  if (request.stdin !== null) {
    const sink = child.stdin as import("bun").FileSink;
    try {
      sink.write(request.stdin);
      await sink.end();
    } catch {
      // The child closed its stdin early (EPIPE); its stream says the rest.
    }
  }

  const framer = new LineFramer(request.reducer, request.maxLineBytes);
  let linger: Timer | null = null;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      framer.push(value);
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
    await stop("internal");
    throw error;
  } finally {
    reader.releaseLock();
    watch?.halt();
    if (linger !== null) clearTimeout(linger);
    request.signal?.removeEventListener("abort", onAbort);
  }
  // stdout is closed; the leader may still run (a linger that has not fired
  // yet holds no stdout). Give it the grace, then end the group.
  const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(grace).then(() => false)]);
  if (!exited) await stop(stoppedBy ?? "linger");
  await child.exited;
  if (stopping !== null) await stopping;
  // Whatever the leader left behind in its group goes with it.
  signalGroup(pid, "SIGKILL");

  return {
    pid,
    durationMs: Math.round(performance.now() - started),
    exitCode: child.exitCode,
    signal: child.signalCode === null ? null : String(child.signalCode),
    stoppedBy,
    stopReason,
    finishedAtStop,
    stderrTail: await readTail(request.stderrFile),
    framing: framer.stats,
  };
}
