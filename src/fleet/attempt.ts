// One claimed attempt: its workspace (cloned from the task's repository, or a
// resumed session's birth folder checked out again: checkout.ts), its phase
// (phase.ts: in this process, as `run` or `resume` runs it), the lease
// renewed by heartbeat with the phase's cost so far, and the result written
// fenced by the lease.
//
// The heartbeat decides three stops: a lease found lost (another attempt may
// run: stop, write nothing); `agentport cancel` (stop as `cancel` stops a
// run, write the result as `cancelled`); no renewal landed for the grace
// (rules.ts graceMs: the database unreachable) — stop before the lease can
// lapse, write nothing; the expiry rule records the attempt once the
// database is back.
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { checkout, patchOf, revParse, streamOf } from "./checkout.ts";
import { inProcessPhase, type Phase } from "./phase.ts";
import { gatesLine, taskGates } from "./gates.ts";
import { graceMs, heartbeatMs } from "./rules.ts";
import type { Lease, Queue, Task } from "./queue.ts";

export interface AttemptContext {
  queue: Queue;
  ledger: string;
  home: string;
  workspaces: string;
  leaseMs: number;
  say: (line: string) => void;
  draining: () => boolean;
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
  let phase: Phase | null = null;
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
  const stop = (why: Ending) => {
    if (ending === "ran") ending = why;
    phase?.stop(why === "cancel" ? "cancel" : "interrupt");
  };
  onStop(() => {
    phase?.stop("interrupt");
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
            stop("cancel");
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
    const input = {
      task,
      workspace,
      home: c.home,
      ledger: c.ledger,
      onCost: (cost: number) => (spent = cost),
      warn: (text: string) => say(`${name}: ${text}`),
    };
    phase = inProcessPhase(input);
    const { verdict, code, lastWord, runDir } = await phase.ended;
    over = true;
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
