// One worker: enters the roster (its row kept alive by heartbeat), claims
// the queued tasks it can take (its agents, its labels, a resume born on this
// host under its workspaces) while it has room, and runs each as an attempt
// (attempt.ts). A dead worker's runs end with it (the keeper), and its tasks
// follow the expiry rule.
import { mkdirSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { runAttempt } from "./attempt.ts";
import { heartbeatMs, overBudget, type Offer } from "./rules.ts";
import type { Queue, Task } from "./queue.ts";

export interface WorkerOptions {
  queue: Queue;
  /** The ledger the runs record into (the queue's database). */
  ledger: string;
  home: string;
  /** This box: its host, labels and ready agents (workspaces is set here). */
  offer: Omit<Offer, "workspaces">;
  concurrency: number;
  once: boolean;
  leaseMs: number;
  /** How long a drain waits for running tasks before stopping them. */
  drainMs: number;
  say: (line: string) => void;
}

const IDLE_POLL_MS = 250;
const UNREACHABLE_PAUSE_MS = 1_000;

export class Worker {
  readonly id: string;
  readonly offer: Offer;
  private draining = false;
  private readonly running = new Map<string, { stop: () => void; done: Promise<void> }>();

  constructor(private readonly o: WorkerOptions) {
    this.id = `${o.offer.hostname}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
    const workspaces = join(o.home, "fleet", "workspaces");
    mkdirSync(workspaces, { recursive: true });
    // The real path: a run records its folder resolved, and a resume's birth folder is matched against it.
    this.offer = { ...o.offer, workspaces: realpathSync(workspaces) };
  }

  /** Stop claiming; the running tasks finish (within drainMs, else they are stopped). */
  drain(): void {
    if (this.draining) return;
    this.draining = true;
    this.o.say(`worker ${this.id}: draining ${this.running.size} task(s)`);
    setTimeout(() => {
      for (const r of this.running.values()) r.stop();
    }, this.o.drainMs).unref();
  }

  async run(): Promise<void> {
    const { queue, leaseMs, concurrency } = this.o;
    const beat = () => queue.roster.beat(this.id, this.offer, concurrency, leaseMs).catch(() => {});
    await beat();
    const beating = setInterval(beat, heartbeatMs(leaseMs));
    try {
      await this.claimLoop();
    } finally {
      clearInterval(beating);
      await queue.roster.leave(this.id).catch(() => {});
    }
  }

  private async claimLoop(): Promise<void> {
    let claimed = 0;
    while (!this.draining && !(this.o.once && claimed > 0)) {
      const sent = performance.now();
      const task = await this.next();
      if (task === "unreachable") {
        await Bun.sleep(UNREACHABLE_PAUSE_MS);
        continue;
      }
      if (task === null) {
        if (this.o.once && this.running.size === 0) break;
        await Bun.sleep(IDLE_POLL_MS);
        continue;
      }
      claimed++;
      const lease = { id: task.id, attempt: task.attempt, worker: this.id };
      const entry = { stop: () => {}, done: Promise.resolve() };
      const context = { ...this.o, workspaces: this.offer.workspaces, draining: () => this.draining };
      entry.done = runAttempt(context, task, lease, sent, (stop) => (entry.stop = stop))
        .catch((error: unknown) =>
          this.o.say(
            `task ${task.id} attempt ${lease.attempt}: the queue is unreachable (${(error as Error).message}); its lease lapses and the expiry rule applies`,
          ),
        )
        .finally(() => this.running.delete(task.id));
      this.running.set(task.id, entry);
    }
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /** Settle expired leases, then claim when there is room; "unreachable" when the queue cannot be reached now. */
  private async next(): Promise<Task | null | "unreachable"> {
    const { queue, leaseMs, concurrency } = this.o;
    try {
      await queue.settleExpired();
      if (this.running.size >= concurrency) return null;
      const closed = (await queue.budgets()).filter((b) => overBudget(b) !== null).map((b) => b.name);
      return await queue.claim(this.id, this.offer, leaseMs, closed);
    } catch (error) {
      this.o.say(`worker ${this.id}: the queue is unreachable (${(error as Error).message}); trying again`);
      return "unreachable";
    }
  }
}
