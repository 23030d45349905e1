// One agent process, from its start to nothing of it left: the one-shot run,
// a pi RPC session, `opencode serve` and ACP agents all hold one of these.
// Started in a process group of its own, named to the keeper (it dies with
// agentport, even with a `kill -9` of it) and under agentport as subreaper;
// stdin a pipe or /dev/null; stdout a byte source (an OS pipe of ours where
// there is one); stderr into its bounded log. One kill rule: TERM to the
// whole tree (the group and every descendant, however it regrouped), KILL to
// what is left of it after the grace.
import { closeSync } from "node:fs";
import { dirname } from "node:path";
import { AgentportError } from "../core/errors.ts";
import type { StoppedBy } from "../core/outcome.ts";
import { agentKeeper, startedKeeper } from "./keeper.ts";
import { FdSource, osPipe, streamSource, type ByteSource } from "./pipe.ts";
import { killTree, processStart, signalTree, type ProcessRef } from "./proc.ts";
import { AGENT_TAG, agentTag } from "./agent-tag.ts";
import { agentSandbox, sandboxArgv } from "./sandbox.ts";
import { StderrLog } from "./stderr-log.ts";
import { becomeSubreaper, holdChild, reapAdopted, releaseChild } from "./subreaper.ts";

/** The agent could not be started: the environment's fault (exit 5), a missing binary or one that cannot run. */
export class SpawnError extends AgentportError {
  constructor(
    message: string,
    readonly code: "not_found" | "not_executable" | "spawn_failed",
  ) {
    super("environment", message, { faultKind: code === "not_found" ? "missing_binary" : "cannot_start" });
  }
}

const DEFAULT_GRACE_MS = 2_000;

export interface AgentProcessOptions {
  argv: string[];
  cwd: string;
  env: Record<string, string | undefined>;
  stdin: "pipe" | "ignore";
  /** The bounded stderr log; "/dev/null" keeps only its tail in memory. */
  stderrFile: string;
  /** Between TERM and KILL of the tree (default 2 s). */
  graceMs?: number;
  /** Bun's stream for stdout instead of an OS pipe of ours (a reader that wants whole chunks of its own). */
  bunStdout?: boolean;
}

/** The processes of this agentport that are still running, by pid: for the synchronous kill at exit. */
const live = new Map<number, AgentProcess>();

/** Synchronous, for process exit: KILL the whole tree of the agent process `pid` (one of ours), or its group. */
export function killAgent(pid: number): void {
  const found = live.get(pid);
  if (found !== undefined) found.kill();
  else killTree({ pid, start: "" });
}

/**
 * Start `command` in a process group of its own, watched by this agentport's
 * keeper; `stdout`: a pipe's write end of ours, else Bun's pipe. Under the
 * command's sandbox when there is one (sandbox.ts), `writable` folders
 * writable besides the cwd.
 */
function spawnChild<Out extends "pipe" | number>(
  command: string[],
  options: { cwd: string; env: Record<string, string | undefined>; stdin: "pipe" | "ignore"; stdout: Out; writable: string[] },
): { child: Bun.Subprocess<"pipe" | "ignore", Out, "pipe">; ref: ProcessRef } {
  const sandbox = agentSandbox();
  const argv = sandbox === null ? command : sandboxArgv(sandbox, options.cwd, command, options.writable);
  // The keeper first: an agent is never without one for longer than it takes to name it (an isolated one needs none).
  const guard = agentKeeper();
  becomeSubreaper();
  let child: Bun.Subprocess<"pipe" | "ignore", Out, "pipe">;
  try {
    child = Bun.spawn(argv, {
      cwd: options.cwd,
      // The tag that lets a later `cancel` prove the process is ours (agent-tag.ts).
      env: { ...options.env, [AGENT_TAG]: agentTag() },
      stdin: options.stdin,
      stdout: options.stdout,
      stderr: "pipe",
      // setsid(): the child leads its own group.
      detached: true,
    });
  } catch (error) {
    const code = (error as { code?: string }).code;
    const bin = command[0] ?? "";
    if (code === "ENOENT") throw new SpawnError(`${bin}: not found`, "not_found");
    if (code === "EACCES") throw new SpawnError(`${bin}: not executable`, "not_executable");
    throw new SpawnError(`${bin}: could not start (${(error as Error).message})`, "spawn_failed");
  }
  const ref = { pid: child.pid, start: processStart(child.pid) ?? "" };
  holdChild(child.pid);
  guard?.watch(ref);
  return { child, ref };
}

/** The kill rule, for a process that is not an agent (a bon gate): TERM to the whole tree, KILL to what is left of it after `grace`. */
export async function endTree(ref: ProcessRef, exited: Promise<unknown>, grace: number): Promise<void> {
  const tree = signalTree(ref, "SIGTERM");
  if (!(await within(exited, grace))) killTree(ref, tree);
}

/** A process of ours is finished with: kill what is left of its tree, here and by the keeper (which also knows its orphans); how many were left. */
export function reapTree(ref: ProcessRef): number {
  const left = killTree(ref);
  releaseChild(ref.pid);
  startedKeeper()?.done(ref.pid);
  return left;
}

const within = (done: Promise<unknown>, ms: number): Promise<boolean> =>
  Promise.race([done.then(() => true), Bun.sleep(ms).then(() => false)]);

export class AgentProcess {
  readonly pid: number;
  /** pid and start time: what the keeper and the reap name it by. */
  readonly ref: ProcessRef;
  readonly stdout: ByteSource;
  readonly exited: Promise<number>;
  readonly grace: number;
  private readonly child: Bun.Subprocess<"pipe" | "ignore", "pipe" | number, "pipe">;
  private readonly stderrLog: StderrLog;
  private readonly stderrDone: Promise<void>;
  private stopping: Promise<void> | null = null;
  private why: StoppedBy | null = null;
  private beforeKill: (() => Promise<void>) | null = null;
  private finishing: Promise<number> | null = null;
  private stdinOpen: boolean;

  /** Start it (SpawnError when it cannot be). */
  static spawn(options: AgentProcessOptions): AgentProcess {
    const base = {
      cwd: options.cwd,
      env: options.env,
      stdin: options.stdin,
      writable: options.stderrFile === "/dev/null" ? [] : [dirname(options.stderrFile)],
    };
    const pipe = options.bunStdout ? null : osPipe();
    if (pipe === null) {
      const { child, ref } = spawnChild(options.argv, { ...base, stdout: "pipe" });
      return new AgentProcess(child, ref, streamSource(child.stdout), options);
    }
    try {
      const { child, ref } = spawnChild(options.argv, { ...base, stdout: pipe.writeFd });
      return new AgentProcess(child, ref, new FdSource(pipe.readFd, child.exited), options);
    } catch (error) {
      closeSync(pipe.readFd);
      throw error;
    } finally {
      // The child has its own copy; ours would keep the pipe from ever ending.
      closeSync(pipe.writeFd);
    }
  }

  private constructor(
    child: Bun.Subprocess<"pipe" | "ignore", "pipe" | number, "pipe">,
    ref: ProcessRef,
    stdout: ByteSource,
    options: AgentProcessOptions,
  ) {
    this.child = child;
    this.ref = ref;
    this.pid = child.pid;
    this.stdout = stdout;
    this.exited = child.exited;
    this.grace = options.graceMs ?? DEFAULT_GRACE_MS;
    this.stdinOpen = options.stdin === "pipe";
    this.stderrLog = new StderrLog(options.stderrFile);
    this.stderrDone = this.stderrLog.drain(child.stderr);
    live.set(this.pid, this);
  }

  /** How it ended; null while it runs. */
  get status(): { exitCode: number | null; signal: string | null } | null {
    const { exitCode, signalCode } = this.child;
    if (exitCode === null && (signalCode === null || signalCode === undefined)) return null;
    return { exitCode, signal: signalCode === null || signalCode === undefined ? null : String(signalCode) };
  }

  /** Write to stdin; false once it is closed (the agent closed it, or we did). */
  write(text: string): boolean {
    if (!this.stdinOpen) return false;
    try {
      const sink = this.child.stdin as Bun.FileSink;
      sink.write(text);
      const flushed = sink.flush();
      if (flushed instanceof Promise) flushed.catch(() => {});
      return true;
    } catch {
      this.stdinOpen = false; // EPIPE: its output says the rest
      return false;
    }
  }

  /** Close stdin (idempotent). */
  async endStdin(): Promise<void> {
    if (!this.stdinOpen) return;
    this.stdinOpen = false;
    try {
      await (this.child.stdin as Bun.FileSink).end();
    } catch {
      // The child closed its stdin early (EPIPE).
    }
  }

  /** Write `text` and close stdin, without holding up the reading of stdout. */
  async feed(text: string): Promise<void> {
    this.write(text);
    await this.endStdin();
  }

  /** Why it was stopped (the first reason); null when it never was. */
  get stoppedBy(): StoppedBy | null {
    return this.why;
  }

  /** What a stop does first, before the kill rule (catch up with stdout; ask the agent to end its turn). */
  whenStopping(hook: () => Promise<void>): void {
    this.beforeKill = hook;
  }

  /**
   * The one kill rule: TERM to the whole tree, KILL to what is left of it once
   * the grace is over (a grandchild may outlive the leader, or make a group of
   * its own). Then stdout is read for one more grace at most: a process that
   * escaped may hold it open. Idempotent: the first reason stays.
   */
  stop(reason: StoppedBy): Promise<void> {
    this.stopping ??= (async () => {
      this.why = reason;
      await this.beforeKill?.();
      await endTree(this.ref, this.exited, this.grace);
      setTimeout(() => this.stdout.cancel(), this.grace).unref();
    })();
    return this.stopping;
  }

  /** Synchronous, for process exit: KILL the whole tree now. */
  kill(): void {
    killTree(this.ref);
  }

  /**
   * stdout is over: the leader gets the grace to exit, then is stopped (it
   * lingered); what it
   * left behind (in its group or not, and what detached from it) is ended, the
   * keeper forgets it, and stderr is finished. How many processes were reaped. Idempotent.
   */
  finish(): Promise<number> {
    this.finishing ??= (async () => {
      if (!(await within(this.exited, this.grace))) await this.stop("linger");
      await this.exited;
      await this.stopping;
      const reaped = this.reap() + (await reapAdopted(this.grace, new Set([startedKeeper()?.pid ?? 0])));
      // stderr ends with the last process holding it; one that escaped is not waited for past the grace.
      if (!(await within(this.stderrDone, this.grace))) this.stderrLog.cancel();
      this.stderrLog.finish();
      return reaped;
    })();
    return this.finishing;
  }

  /** agentport failed mid-way: stopped, what it left reaped, its stderr given up. */
  async abandon(): Promise<void> {
    await this.stop("internal");
    this.reap();
    this.stderrLog.cancel();
    this.stderrLog.finish();
  }

  /** The last lines of its stderr (not redacted). */
  stderrTail(): string {
    return this.stderrLog.tail();
  }

  private reap(): number {
    live.delete(this.pid);
    return reapTree(this.ref);
  }
}
