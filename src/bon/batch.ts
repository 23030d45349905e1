// Best-of-N by clone: one prime paid once, N arms started from it, each in a
// workspace agentport owns (src/bon/strategy.ts), judged by its gates, its
// patch harvested, the arms ranked. The user's checkout is only read, until
// `--apply` applies the winner's patch to it.
//
// Phases, each a ledger row with its tokens and cost (run_id = the batch id):
//   check      zero tokens, on the prime's session (declared right after it)
//   workspace  zero tokens, one per workspace, open until it is removed
//   prime      one session, a reading turn: envelope with changed_files []
//   arm-k      one session per arm (parent: the prime); its own cost (after
//              minus at clone); red arms do not stop the batch, a failed
//              workspace, clone or fork does
// The agent's side (pi over RPC, opencode one-shot or over one server) is
// behind src/bon/sessions.ts.
//   harvest    zero tokens: the ranking, harvest.json, the winner's patch
// Every agent process and every workspace goes in every case, Ctrl-C included;
// after a kill -9 the next batch removes the workspaces (src/bon/reaper.ts).
import { rmdirSync } from "node:fs";
import { join } from "node:path";
import { checkoutChanges, gitDirs, snapshotCheckout, type CheckoutSnapshot } from "../io/checkout-snapshot.ts";
import { applyPatch } from "../io/git.ts";
import { connectLedger, type Ledger } from "../io/ledger.ts";
import { makeRunDir } from "../io/paths.ts";
import { isolateAgents } from "../io/sandbox.ts";
import { killAgent } from "../io/agent-process.ts";
import { notRun, runArm } from "./arm.ts";
import { checkBatch, type Checked } from "./check.ts";
import { gitCeiling, round3, WORKSPACES, type BatchContext } from "./context.ts";
import { buildHarvest, table, totalTokens, usd, writeHarvest, type ArmRecord, type CheckoutCheck, type PrimeRecord } from "./harvest.ts";
import type { BonOptions } from "./options.ts";
import { makeAgent } from "./agents.ts";
import { runPrime } from "./prime.ts";
import { claimRunDir, reapStale } from "./reaper.ts";
import { Recorder } from "./recorder.ts";
import type { Applied, BatchEnd, BonResult } from "./result.ts";
import { errorMessage, type BonAgent } from "./sessions.ts";
import { strategyFor, type WorkspaceStrategy } from "./strategy.ts";

const ZERO_TOKENS = { input: 0, output: 0, cache_read: 0, cache_write: 0 };

/** The batch could not be set up (state folder, ledger, the agent's probe): an environment fault, nothing spent. */
export class BonSetupError extends Error {}

export async function runBon(o: BonOptions): Promise<BonResult> {
  const startedAt = new Date();
  const checkStarted = performance.now();
  const checked = await checkBatch({ cwd: o.cwd, spec: o.spec, specDir: o.specDir, copy: o.copy, keep: [o.home, o.sessionDir] });
  if (!checked.ok) return { kind: "refused", refused: checked };
  const batchId = crypto.randomUUID();
  const setup = <T>(what: string, make: () => T): T => {
    try {
      return make();
    } catch (error) {
      throw new BonSetupError(`${what}: ${errorMessage(error)}`);
    }
  };
  // Before any agent starts: what the checkout is, to say after the arms what changed.
  const checkout = await snapshotCheckout(checked.top).catch((error: unknown) => {
    throw new BonSetupError(`the checkout could not be read: ${errorMessage(error)}`);
  });
  const runDir = setup("the run folder", () => makeRunDir(o.home, batchId));
  setup("the run folder", () => claimRunDir(runDir));
  // The workspaces are in the run folder: the arms write there, and (isolated) nowhere else but their own state;
  // the checkout stays readable (a workspace borrows its objects) where the private /tmp would hide it.
  const readable = o.sandbox === null ? [] : [checked.top, ...(await gitDirs(checked.top).catch(() => []))];
  isolateAgents(
    o.sandbox === null ? null : { ...o.sandbox, writable: [...o.sandbox.writable, runDir], readable: [...o.sandbox.readable, ...readable] },
  );
  const checkSeconds = round3(performance.now() - checkStarted);
  const ledger = await connectLedger(o.home, o.ledger).catch((error: unknown) => {
    throw new BonSetupError(`ledger: ${errorMessage(error)}`);
  });
  try {
    let agent: BonAgent;
    try {
      agent = await makeAgent(o, ledger, { id: batchId, runDir, gitCeiling: gitCeiling(runDir) });
    } catch (error) {
      throw new BonSetupError(errorMessage(error));
    }
    await reapStale(ledger, batchId, o.say);
    const ctx = context(o, ledger, agent, checked, batchId, runDir, checkout);
    // What `run`'s path records (the arms that run through it) joins the batch: its run id.
    const outerRunId = process.env.AGENTPORT_RUN_ID;
    process.env.AGENTPORT_RUN_ID = batchId;
    try {
      return await runBatch(ctx, startedAt, checkSeconds);
    } finally {
      if (outerRunId === undefined) delete process.env.AGENTPORT_RUN_ID;
      else process.env.AGENTPORT_RUN_ID = outerRunId;
    }
  } finally {
    await ledger.close();
  }
}

function context(
  o: BonOptions,
  ledger: Ledger,
  agent: BonAgent,
  c: Checked,
  batchId: string,
  runDir: string,
  checkout: CheckoutSnapshot,
): BatchContext {
  return {
    o,
    c,
    checkout,
    batchId,
    runDir,
    primeId: crypto.randomUUID(),
    recorder: new Recorder(ledger, batchId, { sessionDir: agent.sessionDir, profile: o.profile?.join(",") ?? null, say: o.say }),
    agent,
    brief: { spec: c.specForAgent, specDir: c.specDirForAgent, gates: o.gates },
    processes: new Set(),
    stopped: null,
  };
}

async function runBatch(ctx: BatchContext, startedAt: Date, checkSeconds: number): Promise<BonResult> {
  const strategy = strategyFor(ctx);
  // Synchronous, for process exit: nothing of ours may survive agentport.
  const onExit = () => {
    ctx.agent.killAll();
    for (const pid of ctx.processes) killAgent(pid);
  };
  const onAbort = () => ctx.agent.abortAll();
  process.on("exit", onExit);
  ctx.o.signal?.addEventListener("abort", onAbort);
  let prime: PrimeRecord | null = null;
  const arms: ArmRecord[] = [];
  try {
    const primeFile = await recordCheck(ctx, strategy, checkSeconds);
    // Arms from the spec: no prime to pay (the prime's session holds the batch's own phases all the same).
    const primed = ctx.agent.armsFrom === "spec" ? null : await runPrime(ctx, strategy, primeFile);
    prime = primed?.record ?? null;
    if (primed === null || primed.ok) arms.push(...(await runArms(ctx, strategy)));
  } finally {
    ctx.o.signal?.removeEventListener("abort", onAbort);
    await ctx.agent.closeAll();
    await strategy.releaseAll();
    try {
      rmdirSync(join(ctx.runDir, WORKSPACES));
    } catch {
      // Never made, or a workspace could not be removed (said, and left to the next batch).
    }
    process.off("exit", onExit);
  }
  return await conclude(ctx, prime, arms, startedAt);
}

/** The check phase, on the prime's session (declared now, before any agent runs); the prime's session file to be. */
async function recordCheck(ctx: BatchContext, strategy: WorkspaceStrategy, seconds: number): Promise<string | null> {
  const { o, c } = ctx;
  const cwd = strategy.cwdOf(0);
  const named = ctx.agent.declarePrime(ctx.primeId, cwd);
  await ctx.recorder.declare({
    id: ctx.primeId,
    agent: ctx.agent.agentOf(0),
    cwd,
    model: o.primeModel,
    phase: "prime",
    parentId: null,
    sessionFile: named.sessionFile,
    agentSessionId: named.sessionId,
  });
  const phase = await ctx.recorder.start(ctx.primeId, "check", "check");
  await ctx.recorder.finish(phase, {
    status: "completed",
    ok: true,
    tokens: ZERO_TOKENS,
    costMicroUsd: 0,
    seconds,
    stopReason: null,
    failure: null,
    details: {
      spec: o.spec,
      arms: o.models.length,
      mode: strategy.mode,
      agent: ctx.agent.name ?? o.agents.join(","),
      sessions: ctx.agent.kind,
      arms_from: ctx.agent.armsFrom,
      base: c.found.commit,
      run_dir: ctx.runDir,
    },
  });
  const from = { clone: "each a clone of the prime", fork: "each a fork of the prime", spec: "each from the spec (no prime)" }[
    ctx.agent.armsFrom
  ];
  const where =
    strategy.mode === "parallel" ? `in a workspace each (at most ${strategy.lanes} at once)` : "one after the other in one workspace";
  o.say(
    `bon: check ok — ${c.top} at ${c.found.commit.slice(0, 12)}, spec ${c.specForAgent}, ${o.models.length} arms ${where}, ${from}; run folder ${ctx.runDir}; ${o.sandbox !== null ? "isolated (bwrap: your checkout is read-only to the agent)" : "not isolated"}`,
  );
  return named.sessionFile;
}

/** The arms, at most `lanes` at once; one that cannot start is not run. */
async function runArms(ctx: BatchContext, strategy: WorkspaceStrategy): Promise<ArmRecord[]> {
  const arms: ArmRecord[] = [];
  let next = 1;
  const lane = async () => {
    for (let k = next++; k <= ctx.o.models.length; k = next++) {
      arms.push(ctx.agent.interrupted || ctx.stopped !== null ? notRun(ctx, strategy, k) : await runArm(ctx, strategy, k));
    }
  };
  await Promise.all(Array.from({ length: strategy.lanes }, lane));
  return arms.sort((a, b) => a.arm - b.arm);
}

/** The harvest phase: the ranking, the winner (applied with --apply), harvest.json; the batch's result. */
async function conclude(ctx: BatchContext, prime: PrimeRecord | null, arms: ArmRecord[], startedAt: Date): Promise<BonResult> {
  const { o, c } = ctx;
  const started = performance.now();
  const phase = await ctx.recorder.start(ctx.primeId, "harvest", "harvest");
  const interrupted = ctx.agent.interrupted;
  const stopped = interrupted ? (ctx.stopped?.reason ?? "interrupted") : (ctx.stopped?.reason ?? null);
  // Before anything of ours writes the checkout (--apply): what the batch did to it.
  const checkout = await checkCheckout(ctx);
  const harvest = buildHarvest({
    batchId: ctx.batchId,
    agent: ctx.agent.name,
    sessions: ctx.agent.kind,
    armsFrom: ctx.agent.armsFrom,
    spec: c.specForAgent,
    repo: c.top,
    base: c.found.commit,
    parallel: o.parallel,
    runDir: ctx.runDir,
    startedAt,
    prime,
    arms,
    stopped,
    interrupted,
    isolated: o.sandbox !== null,
    checkout,
  });
  const untouched = checkout.checked && checkout.changed.length === 0;
  const end: BatchEnd = interrupted
    ? { kind: "interrupted" }
    : ctx.stopped !== null
      ? { kind: "stopped", cause: ctx.stopped.cause, reason: ctx.stopped.reason }
      : harvest.winner !== null
        ? { kind: "winner", arm: harvest.winner.arm }
        : { kind: "no_green" };
  const green = harvest.arms.filter((a) => a.verdict === "green").length;
  if (harvest.arms.length > 0) o.say(`\n${table(harvest.arms)}\n`);
  const paid = harvest.prime_paid;
  if (paid !== null && paid.arms > 0 && prime?.ok) {
    o.say(
      `bon: prime ${paid.tokens_once ?? "?"} tokens ($${usd(paid.cost_micro_usd_once)}), paid once — ${paid.arms} independent runs would have paid it ${paid.arms} times: ${paid.tokens_n_times ?? "?"} tokens, ~${paid.tokens_saved ?? "?"} more (an estimate, before provider caching)`,
    );
  }
  let applied: Applied | null = null;
  if (harvest.winner !== null) {
    const w = harvest.winner;
    o.say(`bon: proposed — arm ${w.arm} (${w.model ?? "default model"}), green and the cheapest of the ${green} green`);
    if (o.apply && end.kind === "winner" && !untouched) {
      applied = { ok: false, reason: "your checkout changed during the batch: not applied to it" };
      harvest.applied = { ok: false, reason: applied.reason };
      o.say(`bon: --apply refused: ${applied.reason}; the patch stays in ${w.patch}`);
    } else if (o.apply && end.kind === "winner") {
      applied = await applyWinner(c.top, w.patch);
      harvest.applied = applied.ok ? { ok: true, reason: "" } : { ok: false, reason: applied.reason };
      o.say(
        applied.ok
          ? `bon: applied to ${c.top} with git apply --index ${w.patch}`
          : `bon: --apply failed: ${applied.reason}; the patch stays in ${w.patch}`,
      );
    } else {
      o.say(`bon: ${untouched ? "your checkout is unchanged; " : ""}take it with:\n  ${w.apply}`);
    }
  } else if (prime?.ok) {
    o.say(
      `bon: no arm is green (of ${harvest.arms.filter((a) => a.verdict !== "not_run").length}); the reasons are in ${join(ctx.runDir, "harvest.json")}`,
    );
  }
  if (stopped !== null) o.say(`bon: the batch stopped early: ${stopped}`);
  if (!checkout.checked)
    o.say(
      `bon: your checkout could not be read after the batch (${checkout.changed.join("; ")}): look at it (git status) before you trust it`,
    );
  else if (checkout.changed.length > 0)
    o.say(
      `bon: your checkout changed during the batch (${c.top}); look before you run git there:\n${checkout.changed.map((l) => `  ${l}`).join("\n")}`,
    );
  const file = writeHarvest(ctx.runDir, harvest);
  await ctx.recorder.finish(phase, {
    status: harvest.winner !== null ? "completed" : interrupted ? "aborted" : "failed",
    ok: harvest.winner !== null,
    tokens: ZERO_TOKENS,
    costMicroUsd: 0,
    seconds: round3(performance.now() - started),
    stopReason: null,
    failure: harvest.winner !== null ? null : (stopped ?? "no arm is green"),
    details: {
      arms: harvest.arms.length,
      green,
      winner: harvest.winner?.arm ?? 0,
      harvest: file,
      ...(applied !== null ? { applied: applied.ok } : {}),
      ...(harvest.totals.tokens !== null ? { total_tokens: totalTokens(harvest.totals.tokens)! } : {}),
      ...(harvest.totals.cost_micro_usd !== null ? { total_cost_micro_usd: harvest.totals.cost_micro_usd } : {}),
    },
  });
  return { kind: "ran", end, harvest, harvestFile: file, applied };
}

/** The checkout now against the snapshot taken before the first agent started. */
async function checkCheckout(ctx: BatchContext): Promise<CheckoutCheck> {
  try {
    return { checked: true, changed: checkoutChanges(ctx.checkout, await snapshotCheckout(ctx.c.top)) };
  } catch (error) {
    return { checked: false, changed: [errorMessage(error)] };
  }
}

async function applyWinner(top: string, patch: string): Promise<Applied> {
  try {
    await applyPatch(top, patch);
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: errorMessage(error) };
  }
}
