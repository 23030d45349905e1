// The prime: one reading turn in the first workspace, paid once, that every
// arm starts from. It must report success with no changed files and leave its
// workspace exactly as it found it (tracked, untracked, ignored and `.git`);
// else the batch stops before any arm.
import { clean } from "../core/text.ts";
import { dirtyPaths } from "../io/git.ts";
import { primeBrief } from "./briefs.ts";
import { ignoredManifest, manifestChanges, restoreControl } from "./clone.ts";
import { round3, stopBatch, viewOf, type BatchContext } from "./context.ts";
import { changedFiles, envelopeField } from "./envelope-fields.ts";
import { totalTokens, usd, type PrimeRecord } from "./harvest.ts";
import { causeOfError, errorMessage, type Turned } from "./sessions.ts";
import type { Cause } from "./result.ts";
import type { WorkspaceStrategy } from "./strategy.ts";
import type { Workspace } from "./workspace.ts";

export interface PrimeOutcome {
  record: PrimeRecord;
  /** Whether the arms can start from it. */
  ok: boolean;
}

/** What the prime did to its workspace, if anything. */
async function primeChanges(ctx: BatchContext, ws: Workspace): Promise<string[]> {
  const git = restoreControl(ws.tree, ws.control);
  const dirty = await dirtyPaths(ws.tree, ctx.c.specFolder);
  const ignored = manifestChanges(ws.manifest, await ignoredManifest(ws.tree, ctx.c.specFolder, ws.manifest)).map(
    (c) => `${c.change} ${c.path}`,
  );
  return [...git, ...dirty, ...ignored];
}

export async function runPrime(ctx: BatchContext, strategy: WorkspaceStrategy, primeFile: string | null): Promise<PrimeOutcome> {
  const agent = ctx.agent;
  const phase = await ctx.recorder.start(ctx.primeId, "prime", "prime");
  const started = performance.now();
  const view = viewOf(ctx, `${agent.agentOf(0)} prime`);
  const record: PrimeRecord = {
    session_id: ctx.primeId,
    agent: agent.agentOf(0),
    cost_source: "unknown",
    refused: [],
    agent_session_id: null,
    session_file: primeFile,
    run_session_id: null,
    model: ctx.o.primeModel,
    status: null,
    ok: false,
    tokens: null,
    cost_micro_usd: null,
    seconds: 0,
    summary: null,
    reason: "",
  };
  let cause: Cause = "failed";
  let turned: Turned | null = null;
  let ws: Workspace | null = null;
  try {
    ws = await strategy.prepare(0);
    const session = await agent.open(0, ws, { label: "prime", sessionId: ctx.primeId, model: ctx.o.primeModel, progress: view.sink });
    await ctx.recorder.bind(ctx.primeId, session);
    record.agent_session_id = session.sessionId;
    turned = await agent.turn(session, primeBrief(ctx.brief, agent.delivery(0)), ctx.o.primeModel);
    view.close();
    const v = turned.verdict;
    record.status = v?.status ?? (agent.interrupted ? "aborted" : "crashed");
    record.tokens = turned.usage.tokens ?? v?.tokens ?? null;
    record.cost_micro_usd = turned.usage.costMicroUsd ?? v?.cost_micro_usd ?? null;
    record.cost_source =
      turned.usage.costMicroUsd !== null ? turned.costSource : (v?.cost_micro_usd ?? null) !== null ? v!.cost_source : "unknown";
    record.refused = turned.refused;
    record.summary = envelopeField(v?.envelope ?? null, "summary");
    record.session_file = session.sessionFile ?? record.session_file;
    record.agent_session_id = session.sessionId;
    record.run_session_id = session.runSessionId ?? null;
    await ctx.recorder.bind(ctx.primeId, session);
    record.reason = turned.reason;
    cause = turned.cause;
    if (!record.reason && v !== null) {
      const status = envelopeField(v.envelope, "status");
      const files = changedFiles(v.envelope);
      if (status !== "success") record.reason = `the prime reports ${status ?? "no status"}: ${clean(record.summary ?? "", 200)}`;
      else if (files.length > 0) record.reason = `the prime reports changed files (${files.slice(0, 5).join(", ")}): it must only read`;
    }
    const changes = await primeChanges(ctx, ws);
    if (changes.length > 0) record.reason ||= `the prime changed its workspace (${changes.slice(0, 5).join(", ")}): it must only read`;
    if (!record.reason) record.reason = await agent.primed(session);
  } catch (error) {
    view.close();
    record.reason = errorMessage(error);
    record.status ??= "crashed";
    cause = causeOfError(error);
  }
  record.ok = record.reason === "";
  record.seconds = round3(performance.now() - started);
  // A prime run through `run`'s path has its tokens and cost on that run's phase (same run id): not counted twice.
  const ownRun = record.run_session_id !== null;
  await ctx.recorder.finish(phase, {
    status: record.ok ? "completed" : record.status === "completed" || record.status === null ? "failed" : record.status,
    ok: record.ok,
    tokens: ownRun ? null : record.tokens,
    costMicroUsd: ownRun ? null : record.cost_micro_usd,
    seconds: record.seconds,
    stopReason: turned?.verdict?.stop_reason ?? null,
    failure: record.ok ? null : record.reason,
    details: {
      agent_session_id: record.agent_session_id ?? "",
      ...(ownRun ? { run_session_id: record.run_session_id! } : {}),
      ...(record.summary ? { summary: clean(record.summary, 400) } : {}),
    },
  });
  ctx.o.say(
    `bon: prime — ${record.ok ? "ok" : `failed: ${record.reason}`}; ${totalTokens(record.tokens) ?? "?"} tokens, $${usd(record.cost_micro_usd)}, ${record.seconds.toFixed(1)} s`,
  );
  await agent.release(0).catch(() => {});
  if (ws !== null) await strategy.release(0, ws).catch(() => []);
  if (!record.ok) stopBatch(ctx, `the prime failed: ${record.reason}`, agent.interrupted ? "interrupted" : cause);
  return { record, ok: record.ok };
}
