// An arm's gates, zero tokens, on the tree as the arm left it: every file its
// envelope names exists, then every gate command exits 0 (`sh -c`, in the
// arm's folder, in its own process group, with a timeout; its output in a
// log file). The first red gate is the arm's reason. A workspace's setup
// commands run the same way (`runSteps("setup", …)`).
import { closeSync, existsSync, openSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { clean } from "../core/text.ts";
import { keeper } from "../io/keeper.ts";
import { processStart } from "../io/proc.ts";
import { holdChild } from "../io/subreaper.ts";
import { sandboxArgv, type Sandbox } from "../io/sandbox.ts";
import { endTree, reapTree } from "../io/agent-process.ts";
import { readTail } from "../io/tail.ts";

export interface GateOutcome {
  ok: boolean;
  /** Empty when green; else what failed, one line. */
  reason: string;
  /** Each command that ran, in order (the file check is not one). */
  runs: StepRun[];
}

/** One command's run: its exit code (null: timed out, interrupted, or it could not start) and its log. */
export interface StepRun {
  command: string;
  exit_code: number | null;
  log: string;
}

export interface GateRequest {
  changedFiles: string[];
  /** The arm's folder: files are checked and commands run there. */
  cwd: string;
  commands: string[];
  timeoutMs: number;
  graceMs: number;
  /** The log of gate i goes to `${logPrefix}.gate-${i}.log`. */
  logPrefix: string;
  env: Record<string, string | undefined>;
  signal?: AbortSignal;
  /** Told the pid (process group) of a gate when it starts and when it ended. */
  onProcess?: (pid: number, running: boolean) => void;
  /** The arms' sandbox: a gate runs the arm's code (its tests), so it runs where the arm did. */
  sandbox?: Sandbox | null;
}

export function missingFiles(changedFiles: string[], cwd: string): string[] {
  return changedFiles.filter((f) => !existsSync(isAbsolute(f) ? f : join(cwd, f)));
}

export async function runGates(r: GateRequest): Promise<GateOutcome> {
  const missing = missingFiles(r.changedFiles, r.cwd);
  if (missing.length > 0) {
    const shown = missing.slice(0, 5).join(", ");
    return {
      ok: false,
      reason: `changed files missing: ${shown}${missing.length > 5 ? ` and ${missing.length - 5} more` : ""}`,
      runs: [],
    };
  }
  return await runSteps("gate", r);
}

export type StepRequest = Omit<GateRequest, "changedFiles">;

/** Each command in order until one fails: `gate` (logs `.gate-i.log`) or `setup` (`.setup-i.log`). */
export async function runSteps(kind: "gate" | "setup", r: StepRequest): Promise<GateOutcome> {
  const runs: StepRun[] = [];
  for (const [i, command] of r.commands.entries()) {
    if (r.signal?.aborted) return { ok: false, reason: `interrupted before the ${kind} commands ran`, runs };
    const log = `${r.logPrefix}.${kind}-${i + 1}.log`;
    const result = await runCommand(command, r, log);
    runs.push({ command, exit_code: result.code, log });
    if (result.failed !== null) return { ok: false, reason: `${kind} \`${clean(command, 80)}\` ${result.failed}`, runs };
  }
  return { ok: true, reason: "", runs };
}

/** The command's exit code (null when it did not exit by itself) and, unless it exited 0, why not with the tail of its output. */
async function runCommand(command: string, r: StepRequest, log: string): Promise<{ code: number | null; failed: string | null }> {
  // The keeper first (started on first use): a command is never without one for longer than it takes to name it.
  const guard = keeper();
  const fd = openSync(log, "w", 0o600);
  let proc: Bun.Subprocess;
  try {
    const argv = ["sh", "-c", command];
    proc = Bun.spawn(r.sandbox ? sandboxArgv(r.sandbox, r.cwd, argv) : argv, {
      cwd: r.cwd,
      env: r.env,
      stdin: "ignore",
      stdout: fd,
      stderr: fd,
      detached: true,
    });
  } catch (error) {
    return { code: null, failed: `could not start: ${(error as Error).message}` };
  } finally {
    // The child has its own copy of the descriptor.
    closeSync(fd);
  }
  // A gate dies with agentport too (the keeper), and nothing it started outlives it.
  const gate = { pid: proc.pid, start: processStart(proc.pid) ?? "" };
  holdChild(proc.pid);
  guard?.watch(gate);
  r.onProcess?.(proc.pid, true);
  let stopped: "timeout" | "interrupt" | null = null;
  const stop = (why: "timeout" | "interrupt") => {
    if (stopped !== null) return;
    stopped = why;
    void endTree(gate, proc.exited, r.graceMs);
  };
  const timer = setTimeout(() => stop("timeout"), r.timeoutMs);
  const onAbort = () => stop("interrupt");
  r.signal?.addEventListener("abort", onAbort, { once: true });
  try {
    const code = await proc.exited;
    // Whatever the gate left, in its group or not, goes with it.
    reapTree(gate);
    if (stopped === "timeout") return { code: null, failed: `timed out after ${r.timeoutMs / 1000} s${await tail(log)}` };
    if (stopped === "interrupt") return { code: null, failed: "was interrupted" };
    return { code, failed: code === 0 ? null : `exited ${code}${await tail(log)}` };
  } finally {
    clearTimeout(timer);
    r.signal?.removeEventListener("abort", onAbort);
    r.onProcess?.(proc.pid, false);
  }
}

async function tail(log: string): Promise<string> {
  const text = await readTail(log);
  const last = clean(
    text
      .split("\n")
      .filter((l) => l.trim())
      .slice(-2)
      .join(" | "),
    200,
  );
  return last ? `: ${last}` : "";
}
