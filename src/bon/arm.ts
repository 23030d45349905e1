// One arm: its session declared (parent: the prime) before its workspace and
// its agent exist; a workspace from the strategy, a session from the agent; the
// implementation turn; what it did harvested (its patch, its ignored changes)
// before its gates run; judged; its workspace released, whatever happened.
// A red arm does not stop the batch; a workspace, clone or fork that fails does.
import type { Status } from "../core/verdict.ts";
import { clean } from "../core/text.ts";
import { armBrief, soloBrief } from "./briefs.ts";
import { commandEnv, round3, stopBatch, trackProcess, viewOf, type BatchContext } from "./context.ts";
import { changedFiles, envelopeField } from "./envelope-fields.ts";
import { runGates } from "./gates.ts";
import { totalTokens, usd, type ArmRecord } from "./harvest.ts";
import { causeOfError, errorMessage, type AgentSession, type Turned } from "./sessions.ts";
import type { WorkspaceStrategy } from "./strategy.ts";
import { WorkspaceError, type Workspace } from "./workspace.ts";
import { join } from "node:path";
import { agentSandbox } from "../io/sandbox.ts";

export function newArm(ctx: BatchContext, k: number, cwd: string): ArmRecord {
  return {
    arm: k,
    agent: ctx.agent.agentOf(k),
    model: ctx.o.models[k - 1] ?? null,
    session_id: null,
    agent_session_id: null,
    session_file: null,
    run_session_id: null,
    cwd,
    verdict: "not_run",
    status: null,
    failure_kind: null,
    tokens: null,
    cost_micro_usd: null,
    cost_source: "unknown",
    refused: [],
    seconds: null,
    patch: null,
    patch_bytes: 0,
    changed_files: [],
    ignored_changes: [],
    wrap_up: null,
    wrap_up_finished: null,
    reason: "",
  };
}

/** An arm that never started: the batch stopped, or Ctrl-C came first. */
export function notRun(ctx: BatchContext, strategy: WorkspaceStrategy, k: number): ArmRecord {
  const rec = newArm(ctx, k, strategy.cwdOf(k));
  rec.reason = ctx.agent.interrupted ? "interrupted before it started" : `not run: ${ctx.stopped?.reason ?? "the batch stopped"}`;
  return rec;
}

export async function runArm(ctx: BatchContext, strategy: WorkspaceStrategy, k: number): Promise<ArmRecord> {
  const label = `arm-${k}`;
  const rec = newArm(ctx, k, strategy.cwdOf(k));
  rec.session_id = crypto.randomUUID();
  await ctx.recorder.declare({ id: rec.session_id, agent: rec.agent, cwd: rec.cwd, model: rec.model, phase: label, parentId: ctx.primeId });
  const phase = await ctx.recorder.start(rec.session_id, "arm", label);
  const started = performance.now();
  const notes: string[] = [];
  const view = viewOf(ctx, `${rec.agent} arm ${k}`);
  let ws: Workspace | null = null;
  try {
    let session: AgentSession;
    try {
      ws = await strategy.prepare(k);
      session = await ctx.agent.open(k, ws, { label, sessionId: rec.session_id, model: rec.model, progress: view.sink });
      rec.agent_session_id = session.sessionId;
      rec.session_file = session.sessionFile;
      await ctx.recorder.bind(rec.session_id, session);
    } catch (error) {
      const what = error instanceof WorkspaceError ? "the workspace" : strategy.mode === "parallel" ? "the fork" : "the clone";
      rec.reason = `${what} failed: ${errorMessage(error)}`;
      stopBatch(ctx, `arm ${k}: ${rec.reason}`, causeOfError(error));
      return rec;
    }
    const brief = ctx.agent.armsFrom === "spec" ? soloBrief : armBrief;
    const turned = await ctx.agent.turn(session, brief(ctx.brief, ctx.agent.delivery(k)), rec.model);
    view.close();
    rec.run_session_id = session.runSessionId ?? null;
    if (session.sessionId !== rec.agent_session_id) {
      // Named during its turn (opencode's fork).
      rec.agent_session_id = session.sessionId;
      await ctx.recorder.bind(rec.session_id, session);
    }
    const harvested = await strategy.harvest(ws, label);
    rec.patch = harvested.patch;
    rec.patch_bytes = harvested.patchBytes;
    rec.ignored_changes = harvested.ignored;
    notes.push(...harvested.notes);
    await judge(ctx, rec, turned, ws.cwd);
    return rec;
  } finally {
    view.close();
    await ctx.agent.release(k).catch((error: unknown) => notes.push(errorMessage(error)));
    if (ws !== null) {
      try {
        notes.push(...(await strategy.release(k, ws)));
      } catch (error) {
        notes.push(errorMessage(error));
        stopBatch(ctx, `arm ${k}: ${errorMessage(error)}; the next arms would not start from the same workspace`);
      }
    }
    await finish(ctx, rec, phase, started, notes);
  }
}

/** The turn, the envelope, the patch, then the gates: fills verdict, status, usage, changed files and reason. */
async function judge(ctx: BatchContext, rec: ArmRecord, turned: Turned, cwd: string): Promise<void> {
  const v = turned.verdict;
  rec.status = v?.status ?? (ctx.agent.interrupted ? "aborted" : "crashed");
  rec.failure_kind = v?.failure?.kind ?? null;
  rec.tokens = turned.usage.tokens;
  rec.cost_micro_usd = turned.usage.costMicroUsd;
  rec.cost_source = turned.costSource;
  rec.refused = turned.refused;
  const said = v?.summary ?? {};
  if (said.wrap_up === "timeout" || said.wrap_up === "budget") {
    rec.wrap_up = said.wrap_up;
    rec.wrap_up_finished = said.wrap_up_finished === true;
  }
  if (turned.reason || v === null) {
    rec.reason = turned.reason || "no verdict";
    return;
  }
  rec.changed_files = changedFiles(v.envelope);
  const status = envelopeField(v.envelope, "status");
  if (status !== "success") {
    rec.reason = `the arm reports ${status ?? "no status"}: ${clean(envelopeField(v.envelope, "summary") ?? "", 200)}`;
    return;
  }
  if (rec.patch === null) return;
  if (rec.patch_bytes === 0) {
    rec.reason = "no change";
    return;
  }
  const gates = await runGates({
    changedFiles: rec.changed_files,
    cwd,
    commands: ctx.o.gates,
    timeoutMs: ctx.o.gateTimeoutMs,
    graceMs: ctx.o.graceMs ?? 2_000,
    logPrefix: join(ctx.runDir, `arm-${rec.arm}`),
    env: commandEnv(ctx),
    signal: ctx.o.signal,
    onProcess: trackProcess(ctx),
    sandbox: agentSandbox(),
  });
  rec.reason = gates.reason;
  if (gates.ok) rec.verdict = "green";
}

async function finish(ctx: BatchContext, rec: ArmRecord, phase: number, started: number, notes: string[]): Promise<void> {
  if (rec.verdict === "not_run") rec.verdict = "red";
  // A red arm whose agent was refused something: said, so it does not read as the model's failure alone.
  if (rec.verdict === "red" && rec.refused.length > 0)
    notes.push(
      `${rec.refused.length} request${rec.refused.length === 1 ? "" : "s"} refused (${rec.refused[0]!.kind}: ${clean(rec.refused[0]!.subject, 80)})`,
    );
  if (notes.length > 0) rec.reason = [rec.reason, ...notes].filter(Boolean).join("; ");
  rec.seconds = round3(performance.now() - started);
  const status: Status = rec.verdict === "green" ? "completed" : rec.status === null || rec.status === "completed" ? "failed" : rec.status;
  // An arm run through `run`'s path has its tokens and cost on that run's phase (same run id): not counted twice.
  const ownRun = rec.run_session_id !== null;
  await ctx.recorder.finish(phase, {
    status,
    ok: rec.verdict === "green",
    tokens: ownRun ? null : rec.tokens,
    costMicroUsd: ownRun ? null : rec.cost_micro_usd,
    seconds: rec.seconds,
    stopReason: null,
    failure: rec.verdict === "green" ? null : clean(rec.reason, 600),
    details: {
      arm: rec.arm,
      verdict: rec.verdict,
      model: rec.model ?? "",
      patch_bytes: rec.patch_bytes,
      agent: rec.agent,
      agent_session_id: rec.agent_session_id ?? "",
      ...(ownRun ? { run_session_id: rec.run_session_id! } : {}),
      ...(rec.refused.length > 0 ? { refused: rec.refused.length } : {}),
      ...(rec.wrap_up !== null ? { wrap_up: rec.wrap_up, wrap_up_finished: rec.wrap_up_finished === true } : {}),
      changed_files: rec.changed_files.length,
      ignored_changes: rec.ignored_changes.length,
    },
  });
  ctx.o.say(
    `bon: arm ${rec.arm} (${rec.agent}, ${rec.model ?? "default model"}) — ${rec.verdict}; ${totalTokens(rec.tokens) ?? "?"} tokens, $${usd(rec.cost_micro_usd)}, ${rec.seconds.toFixed(1)} s, patch ${rec.patch_bytes} B${rec.ignored_changes.length > 0 ? `, ${rec.ignored_changes.length} ignored files changed (not in the patch)` : ""}${rec.reason ? ` — ${clean(rec.reason, 160)}` : ""}`,
  );
}
