// The ACP driver: an ACP agent started like every agent (its own group, the
// keeper watching), its stdout framed into the client reducer, the client's
// messages written to its stdin as lines. The prompt's response ends the run:
// stdin is closed and the agent, which ends with its stdin, is given the
// linger to go. A stop (timeout, stall, budget, cancel, Ctrl-C) asks first:
// `session/cancel`, then up to the cancel grace for the prompt to come back
// `cancelled`, then the process tree is stopped as for every agent.
import { isUtf8 } from "node:buffer";
import { recordFile } from "../../io/append-file.ts";
import { secrets } from "../../core/redact.ts";
import { join } from "node:path";
import type { AcpClient } from "../../core/acp/reducer.ts";
import { LineFramer } from "../../core/frame.ts";
import type { StoppedBy } from "../../core/outcome.ts";
import type { Json } from "../../core/record.ts";
import { keeper } from "../../io/keeper.ts";
import { streamSource } from "../../io/pipe.ts";
import { abandonAgent, driveResult, endTree, finishStderr, settleAgent, spawnAgent, watchStops, type DriveRequest, type DriveResult } from "../../io/spawn.ts";
import { StderrLog } from "../../io/stderr-log.ts";
import type { Watch } from "../../io/watch.ts";

const DEFAULT_GRACE_MS = 2_000;
/** How long a cancelled prompt is given to come back `cancelled` before the tree is stopped. */
export const CANCEL_GRACE_MS = 3_000;
const POLL_MS = 20;

/** The run folder's record of every permission answer agentport gave the agent. */
export const ANSWERS_FILE = "acp-answers.jsonl";

/** Bounded like the run folder's other records: an agent that asks without end cannot fill the disk. */
const ANSWERS_LIMIT = { maxBytes: 16 * 1024 * 1024, last: JSON.stringify({ type: "agentport.answers_cut", max_bytes: 16 * 1024 * 1024 }) };

export function answerRecorder(runDir: string): (answer: Json) => void {
  // The answer names what the agent asked (its titles and paths): redacted like every stored line. A full disk loses the record, not the run.
  return (answer) => recordFile(join(runDir, ANSWERS_FILE), ANSWERS_LIMIT).line(secrets.text(JSON.stringify({ ts: new Date().toISOString(), ...answer })));
}

async function until(done: () => boolean, exited: Promise<unknown>, ms: number): Promise<void> {
  let gone = false;
  void exited.then(() => (gone = true));
  const deadline = performance.now() + ms;
  while (!done() && !gone && performance.now() < deadline) await Bun.sleep(POLL_MS);
}

export async function driveAcp(request: DriveRequest, client: AcpClient, cancelGraceMs = CANCEL_GRACE_MS): Promise<DriveResult> {
  const started = performance.now();
  keeper();
  const { child, agent } = spawnAgent(request.argv, { cwd: request.cwd, env: request.env, stdin: "pipe" });
  const source = streamSource(child.stdout);
  request.onSpawn?.(child.pid);
  const stderrLog = new StderrLog(request.stderrFile);
  const stderrDone = stderrLog.drain(child.stderr);
  const grace = request.graceMs ?? DEFAULT_GRACE_MS;
  const stdin = child.stdin;
  let stdinOpen = true;
  const write = (message: Json) => {
    if (!stdinOpen) return;
    try {
      stdin.write(`${JSON.stringify(message)}\n`);
      stdin.flush();
    } catch {
      stdinOpen = false; // the agent closed its stdin: its output says the rest
    }
  };
  const closeStdin = () => {
    if (!stdinOpen) return;
    stdinOpen = false;
    try {
      void Promise.resolve(stdin.end()).catch(() => {});
    } catch {
      // already closed
    }
  };

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
      await source.caughtUp(250);
      finishedAtStop = request.reducer.finished();
      // Ask first: the agent ends its own turn and keeps its session whole.
      if (!finishedAtStop && why !== "internal" && client.cancel()) await until(() => client.over(), child.exited, cancelGraceMs);
      closeStdin();
      const gone = await Promise.race([child.exited.then(() => true), Bun.sleep(Math.min(grace, 500)).then(() => false)]);
      if (!gone) await endTree(agent, child.exited, grace);
      setTimeout(() => source.cancel(), grace).unref();
    })();
    return stopping;
  };
  const stops = watchStops(request, (why, reason) => {
    stopReason = reason ?? stopReason;
    void stop(why);
  });
  watch = stops.watch;

  const framer = new LineFramer(request.reducer, request.maxLineBytes, { isUtf8 });
  let linger: Timer | null = null;
  client.start(write);
  try {
    for (;;) {
      const value = await source.read();
      if (value === null) break;
      framer.push(value);
      watch?.activity();
      if (client.over() && linger === null) {
        // Nothing more to ask: the agent ends with its stdin; one that does not is ended after the linger.
        closeStdin();
        linger = setTimeout(() => void stop("linger"), request.lingerMs ?? grace);
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
  closeStdin();
  const reaped = await settleAgent(child.exited, agent, grace, () => stop(stoppedBy ?? "linger"), () => stopping);
  await finishStderr(stderrLog, stderrDone, grace);
  return driveResult(child, started, { stoppedBy, stopReason, finishedAtStop, reaped }, stderrLog.tail(), framer.stats);
}
