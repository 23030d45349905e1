// What every part of a batch shares: the options, the check's findings, the
// ledger recorder, the agent's sessions, and whether (and why) the batch stopped.
import { join } from "node:path";
import type { Checked } from "./check.ts";
import type { CheckoutSnapshot } from "../io/checkout-snapshot.ts";
import type { BriefInput } from "./briefs.ts";
import type { BonOptions, ProgressView } from "./options.ts";
import type { Recorder } from "./recorder.ts";
import type { Cause } from "./result.ts";
import type { BonAgent } from "./sessions.ts";

export interface BatchContext {
  o: BonOptions;
  c: Checked;
  /** The user's checkout before any agent started. */
  checkout: CheckoutSnapshot;
  batchId: string;
  runDir: string;
  /** The prime's agentport session: the check, the prime, the harvest and the workspaces are its phases. */
  primeId: string;
  recorder: Recorder;
  agent: BonAgent;
  brief: BriefInput;
  /** Gate and setup process groups now running: killed with agentport. */
  processes: Set<number>;
  /** Why no further arm starts, once something stopped the batch. */
  stopped: { reason: string; cause: Cause } | null;
}

export function stopBatch(ctx: BatchContext, reason: string, cause: Cause = "failed"): void {
  ctx.stopped ??= { reason, cause };
}

export function viewOf(ctx: BatchContext, label: string): ProgressView {
  return ctx.o.view?.(label) ?? { sink: () => {}, close: () => {} };
}

export const round3 = (ms: number) => Math.round(ms) / 1000;

/** The run folder's folder of workspaces. */
export const WORKSPACES = "workspaces";

/** For the agents, gates and setup: git run inside a workspace never looks above it (an arm that removed `.git` must not find a repository around the run folder). */
export const gitCeiling = (runDir: string) => ({ GIT_CEILING_DIRECTORIES: join(runDir, WORKSPACES) });

/** The environment of gates and setup commands. */
export const commandEnv = (ctx: BatchContext): Record<string, string | undefined> => ({ ...process.env, ...gitCeiling(ctx.runDir) });

/** Running commands (gates, setup) the batch kills with itself. */
export const trackProcess = (ctx: BatchContext) => (pid: number, running: boolean) => {
  if (running) ctx.processes.add(pid);
  else ctx.processes.delete(pid);
};
