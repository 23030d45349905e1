// One claimed attempt: its workspace (cloned from the task's repository, or a
// resumed session's birth folder checked out again), this agentport's
// `run --json` (or `resume ID --json`) in it watched by the keeper, the lease
// renewed by heartbeat with the run's cost so far (its progress records,
// progress.ts), and the result written fenced by the lease.
//
// The heartbeat decides three stops: a lease found lost (another attempt may
// run: stop, write nothing); `agentport cancel` (stop as `cancel` stops a
// run, write the result as `cancelled`); no renewal landed for the grace
// (rules.ts graceMs: the database unreachable) — stop before the lease can
// lapse, write nothing; the expiry rule records the attempt once the
// database is back.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { harvestPatch } from "../io/git.ts";
import { RUN_FILES } from "../io/run-folder.ts";
import { STORED_MAX_BYTES } from "./db.ts";
import { dirname, join } from "node:path";
import { keeper } from "../io/keeper.ts";
import { processStart } from "../io/proc.ts";
import { CANCEL_SIGNAL } from "../cli/interrupt.ts";
import { gatesLine, taskGates } from "./gates.ts";
import { watchProgress } from "./progress.ts";
import { graceMs, heartbeatMs } from "./rules.ts";
import type { Kept, Lease, Queue, Task, TaskRequest } from "./queue.ts";

export interface AttemptContext {
  queue: Queue;
  ledger: string;
  home: string;
  workspaces: string;
  leaseMs: number;
  self: string[];
  say: (line: string) => void;
  draining: () => boolean;
}

/** The request's flags as `run` takes them (a resume keeps the session's agent: no --agent). */
export function runFlags(request: TaskRequest, resume = false): string[] {
  return Object.entries(request)
    .filter(([name]) => !(resume && name === "agent"))
    .flatMap(([name, value]) => (value === true ? [`--${name}`] : value === false ? [] : [`--${name}`, String(value)]));
}

/** A git command, awaited (the heartbeat beats on during a long clone); why it failed, or null. */
async function git(args: string[], cwd?: string): Promise<string | null> {
  const child = Bun.spawn(["git", ...args], {
    cwd,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
  });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  return code === 0 ? null : stderr.trim().split("\n").at(-1) || `git ${args[0]} failed`;
}

/** Clone the task's code into `workspace` (from its repository, or its bundle written beside it); why not, or null. */
async function checkout(queue: Queue, task: Task, workspace: string): Promise<string | null> {
  let source = task.repo;
  if (task.bundle_bytes !== null) {
    source = `${workspace}.bundle`;
    writeFileSync(source, (await queue.bundle(task.id)) ?? new Uint8Array());
  }
  try {
    const failed = await git(["clone", "--quiet", "--no-hardlinks", source, workspace]);
    if (failed !== null || task.ref === null) return failed;
    // A tag, a commit, a local branch, or a branch only the clone's origin has.
    const commit = [task.ref, `origin/${task.ref}`].map((r) => revParse(workspace, `${r}^{commit}`)).find((c) => c !== null);
    return commit === undefined ? `no ref ${task.ref} in it` : await git(["checkout", "--quiet", "--detach", commit], workspace);
  } finally {
    if (source !== task.repo) rmSync(source, { force: true });
  }
}

function revParse(workspace: string, rev: string): string | null {
  const done = Bun.spawnSync(["git", "rev-parse", "--verify", "-q", "--end-of-options", rev], {
    cwd: workspace,
    stdout: "pipe",
    stderr: "ignore",
  });
  return done.exitCode === 0 ? done.stdout.toString().trim() : null;
}

const keep = (file: string): Kept => {
  const bytes = statSync(file).size;
  return { bytes, gzipped: bytes > STORED_MAX_BYTES ? null : Bun.gzipSync(readFileSync(file)) };
};

/** The workspace's changes against the commit checked out (as bon harvests them); null when git cannot say. */
async function patchOf(workspace: string, base: string | null): Promise<Kept | null> {
  if (base === null) return null;
  const file = `${workspace}.patch`;
  try {
    await harvestPatch(workspace, null, base, file);
    return keep(file);
  } catch {
    return null;
  } finally {
    rmSync(file, { force: true });
  }
}

/** The run's newest run folder under `home` (`<stamp>-<session's start>`); null when none is found. */
function runDirOf(home: string, session: unknown): string | null {
  if (typeof session !== "string") return null;
  const runs = join(home, "runs");
  try {
    const dir = readdirSync(runs)
      .filter((d) => d.includes(`-${session.slice(0, 8)}`))
      .sort()
      .at(-1);
    return dir === undefined ? null : join(runs, dir);
  } catch {
    return null;
  }
}

/** The run's redacted stream (its run folder's stream.jsonl); null when none is found. */
function streamOf(runDir: string | null): Kept | null {
  try {
    return runDir === null ? null : keep(join(runDir, RUN_FILES.stream));
  } catch {
    return null;
  }
}

/** How an attempt ended its run: by itself, lost (write nothing), or cancelled. */
type Ending = "ran" | "lost" | "cancel";

/**
 * Run one attempt; `onStop` receives how a drain stops it. `renewedAt` is
 * when the claim was sent: the lease runs from no earlier than that.
 */
export async function runAttempt(
  c: AttemptContext,
  task: Task,
  lease: Lease,
  renewedAt: number,
  onStop: (stop: () => void) => void,
): Promise<void> {
  const { queue, leaseMs, say } = c;
  const name = `task ${task.id} attempt ${lease.attempt}`;
  let ending = "ran" as Ending;
  let child: ReturnType<typeof Bun.spawn> | null = null;
  // The renewal in flight, if any. Before a result is written the heartbeat
  // is quieted and that renewal awaited: one answered after the finish would
  // find the row no longer running and read as a lost lease.
  let renewal: Promise<void> | null = null;
  let quiet = false;
  // The run has ended: the heartbeat keeps the lease until the result is written and
  // stops nothing, so a cancel that comes after the run ended on its own does not relabel it.
  let over = false;
  /** The run's cost so far, as its progress told it (null: not yet). */
  let spent: number | null = null;
  // The gates (after the run): stopped by a drain's stop and a lost lease (their result would be refused).
  const gatesStop = new AbortController();
  const stop = (why: Ending, signal: NodeJS.Signals = "SIGTERM") => {
    if (ending === "ran") ending = why;
    child?.kill(signal);
  };
  onStop(() => {
    child?.kill("SIGTERM");
    gatesStop.abort();
  });
  const beat = setInterval(() => {
    if (ending !== "ran" || quiet) return;
    if (!over && performance.now() - renewedAt > graceMs(leaseMs)) {
      say(
        `${name}: no lease renewal for ${Math.round(graceMs(leaseMs) / 1000)} s (the queue unreachable): stopping its run before the lease lapses; nothing written`,
      );
      return stop("lost");
    }
    if (renewal !== null) return;
    const sent = performance.now();
    renewal = queue
      .renew(lease, leaseMs, spent)
      .then(
        (held) => {
          if (held !== "lost") renewedAt = sent;
          else gatesStop.abort();
          if (over || ending !== "ran") return;
          if (held === "cancel") {
            say(`${name}: cancelled, stopping its run`);
            stop("cancel", CANCEL_SIGNAL);
          } else if (held === "lost") {
            say(`${name}: lease lost, stopping its run`);
            stop("lost");
          }
        },
        () => {}, // unreachable for a beat: the next one tries again; the grace decides
      )
      .finally(() => (renewal = null));
  }, heartbeatMs(leaseMs));
  /** Stop renewing and let the renewal in flight answer, so the result written next is the lease's last word. */
  const quieted = async (): Promise<void> => {
    quiet = true;
    await renewal;
  };
  const resume = task.resume_session;
  const workspace = task.birth_folder ?? join(c.workspaces, `${task.id}-${lease.attempt}`);
  try {
    mkdirSync(dirname(workspace), { recursive: true });
    const cloneFailed = existsSync(workspace) ? null : await checkout(queue, task, workspace);
    if (cloneFailed !== null) {
      await quieted();
      const written = await queue.finish(lease, { error: { kind: "checkout", message: cloneFailed } }, 5);
      say(
        `task ${task.id}: cannot check out ${task.repo}${task.ref === null ? "" : ` at ${task.ref}`}: ${cloneFailed}${written ? "" : " (lease lost: not written)"}`,
      );
      return;
    }
    if (c.draining()) {
      await quieted();
      await queue.release(lease);
      return;
    }
    // A lease given up meanwhile (the grace ran out): no agent starts; its lapse queues the task again.
    const now = (): Ending => ending; // set by the heartbeat meanwhile
    if (now() === "lost") return;
    const commit = revParse(workspace, "HEAD");
    const start = await queue.agentStarting(lease, commit);
    if (start === "cancel") {
      await quieted();
      const written = await queue.finish(lease, null, 130, "cancelled");
      say(`${name}: cancelled before its agent started${written ? "" : " (lease lost: not written)"}`);
      return;
    }
    if (start === "lost" || now() === "lost") return;
    say(`${name}: started`);
    const command = resume === null ? ["run"] : ["resume", resume];
    const argv = [
      ...c.self,
      ...command,
      "--json",
      "--progress",
      "json",
      "--home",
      c.home,
      "--ledger",
      c.ledger,
      ...runFlags(task.request, resume !== null),
      "--prompt",
      task.prompt,
    ];
    // The keeper first (its own start takes ms): a kill -9 between the spawn and the watch would leave the run unwatched.
    const guard = keeper();
    child = Bun.spawn(argv, { cwd: workspace, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    guard?.watch({ pid: child.pid, start: processStart(child.pid) ?? "" });
    const [stdout, lastWord, code] = await Promise.all([
      new Response(child.stdout as ReadableStream).text(),
      watchProgress(child.stderr as ReadableStream<Uint8Array>, (cost) => (spent = cost)),
      child.exited,
    ]);
    over = true;
    guard?.done(child.pid);
    let verdict: unknown;
    try {
      verdict = JSON.parse(stdout);
    } catch {
      verdict = { error: { kind: "no_verdict", message: lastWord } };
    }
    const runDir = runDirOf(c.home, (verdict as { session_id?: unknown }).session_id);
    // As bon: the patch first (a gate's build output is not the arm's change), then the gates, only after a run that ended well.
    const patch = ending === "lost" ? null : await patchOf(workspace, commit);
    const gated = ending === "ran" && code === 0 && task.gates.length > 0;
    const gates = gated ? await taskGates(task.gates, workspace, runDir, gatesStop.signal) : null;
    await quieted();
    const written =
      ending !== "lost" &&
      (await queue.finish(lease, verdict, code, ending === "cancel" ? "cancelled" : "done", { patch, stream: streamOf(runDir), gates }));
    const why = code === 0 ? "" : ` (${lastWord})`;
    say(
      `${name}: exit ${code}${why}${gates === null ? "" : gatesLine(gates, task.gates.length)}${ending === "cancel" ? " (cancelled)" : ""}${written ? "" : ", refused: the lease is no longer this attempt's (nothing written)"}`,
    );
  } finally {
    clearInterval(beat);
    rmSync(workspace, { recursive: true, force: true });
  }
}
