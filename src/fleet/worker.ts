// One worker: claims queued tasks while it has room, runs each exactly as
// `run` does (this same agentport's `run --json`, in a workspace of its own
// cloned from the task's repository), keeps each lease alive by heartbeat,
// and writes the result fenced by the lease. A lost lease stops the run (its
// agent with it) and writes nothing. The keeper ends a run whose worker died.
import { mkdirSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { keeper } from "../io/keeper.ts";
import { processStart } from "../io/proc.ts";
import { heartbeatMs } from "./rules.ts";
import type { Lease, Queue, Task, TaskRequest } from "./queue.ts";

export interface WorkerOptions {
  queue: Queue;
  /** The ledger the runs record into (the queue's database). */
  ledger: string;
  home: string;
  concurrency: number;
  once: boolean;
  leaseMs: number;
  /** How long a drain waits for running tasks before stopping them. */
  drainMs: number;
  say: (line: string) => void;
  /** How to start this agentport again (its `run`). */
  self: string[];
}

const IDLE_POLL_MS = 250;
const UNREACHABLE_PAUSE_MS = 1_000;

/** The request's flags as `run` takes them. */
export function runFlags(request: TaskRequest): string[] {
  return Object.entries(request).flatMap(([name, value]) => (value === true ? [`--${name}`] : value === false ? [] : [`--${name}`, String(value)]));
}

function git(args: string[], cwd?: string): string | null {
  const done = Bun.spawnSync(["git", ...args], { cwd, stdout: "ignore", stderr: "pipe", env: { ...process.env, GIT_TERMINAL_PROMPT: "0" } });
  return done.exitCode === 0 ? null : done.stderr.toString().trim().split("\n").at(-1) || `git ${args[0]} failed`;
}

export class Worker {
  readonly id = `${hostname()}:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  private draining = false;
  private readonly running = new Map<string, { stop: () => void; done: Promise<void> }>();

  constructor(private readonly o: WorkerOptions) {}

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
    let claimed = 0;
    while (!this.draining && !(this.o.once && claimed > 0)) {
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
      entry.done = this.execute(task, lease, (stop) => (entry.stop = stop))
        .catch((error: unknown) => this.o.say(`task ${task.id} attempt ${lease.attempt}: the queue is unreachable (${(error as Error).message}); its lease lapses and the expiry rule applies`))
        .finally(() => this.running.delete(task.id));
      this.running.set(task.id, entry);
    }
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  /** Settle expired leases, then claim when there is room; "unreachable" when the queue cannot be reached now. */
  private async next(): Promise<Task | null | "unreachable"> {
    try {
      await this.o.queue.settleExpired();
      return this.running.size < this.o.concurrency ? await this.o.queue.claim(this.id, this.o.leaseMs) : null;
    } catch (error) {
      this.o.say(`worker ${this.id}: the queue is unreachable (${(error as Error).message}); trying again`);
      return "unreachable";
    }
  }

  private async execute(task: Task, lease: Lease, onStop: (stop: () => void) => void): Promise<void> {
    const { queue, leaseMs, say } = this.o;
    let lost = false;
    let child: ReturnType<typeof Bun.spawn> | null = null;
    const stop = () => child?.kill("SIGTERM");
    onStop(stop);
    const beat = setInterval(() => {
      queue.renew(lease, leaseMs).then(
        (held) => {
          if (held || lost) return;
          lost = true;
          say(`task ${task.id} attempt ${lease.attempt}: lease lost, stopping its run`);
          stop();
        },
        () => {}, // unreachable for a beat: the next one tries again; the lease decides
      );
    }, heartbeatMs(leaseMs));
    const workspace = join(this.o.home, "fleet", "workspaces", `${task.id}-${lease.attempt}`);
    try {
      mkdirSync(join(workspace, ".."), { recursive: true });
      const cloneFailed = git(["clone", "--quiet", "--no-hardlinks", task.repo, workspace]) ?? (task.ref === null ? null : git(["checkout", "--quiet", "--detach", task.ref], workspace));
      if (cloneFailed !== null) {
        const written = await queue.finish(lease, { error: { kind: "checkout", message: cloneFailed } }, 5);
        say(`task ${task.id}: cannot check out ${task.repo}${task.ref === null ? "" : ` at ${task.ref}`}: ${cloneFailed}${written ? "" : " (lease lost: not written)"}`);
        return;
      }
      if (this.draining || !(await queue.agentStarting(lease))) {
        if (this.draining) await queue.release(lease);
        return;
      }
      say(`task ${task.id} attempt ${lease.attempt}: started`);
      const argv = [...this.o.self, "run", "--json", "--progress", "off", "--home", this.o.home, "--ledger", this.o.ledger, ...runFlags(task.request), "--prompt", task.prompt];
      child = Bun.spawn(argv, { cwd: workspace, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const guard = keeper();
      guard?.watch({ pid: child.pid, start: processStart(child.pid) ?? "" });
      const [stdout, stderr, code] = await Promise.all([new Response(child.stdout as ReadableStream).text(), new Response(child.stderr as ReadableStream).text(), child.exited]);
      guard?.done(child.pid);
      let verdict: unknown;
      try {
        verdict = JSON.parse(stdout);
      } catch {
        verdict = { error: { kind: "no_verdict", message: stderr.trim().split("\n").at(-1) ?? "" } };
      }
      const written = !lost && (await queue.finish(lease, verdict, code));
      say(`task ${task.id} attempt ${lease.attempt}: exit ${code}${written ? "" : ", refused: the lease is no longer this attempt's (nothing written)"}`);
    } finally {
      clearInterval(beat);
      rmSync(workspace, { recursive: true, force: true });
    }
  }
}
