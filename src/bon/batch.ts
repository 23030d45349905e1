// Best-of-N by clone: one prime paid once, N arms started from it, each judged
// by its gates, its patch harvested and the tree reset, the arms ranked.
//
// Phases, each a ledger row with its tokens and cost (run_id = the batch id):
//   check    zero tokens, on the prime's session (declared right after it)
//   prime    one RPC session, a reading turn: envelope with changed_files []
//   arm-k    one session per arm (parent: the prime); its own cost (after
//            minus at clone); red arms do not stop the batch, a failed clone
//            (or fork) does
//   harvest  zero tokens: the ranking, harvest.json, the winner's patch
//
// In one tree (the default) a single pi process serves the prime and every
// arm: switch back to the prime's file, clone, prompt; the tree is harvested
// and reset after each arm whatever it did. With `parallel`, the prime's
// process is closed after the prime and each arm is its own
// `pi --mode rpc --fork <prime file>` in its own git worktree (a clone keeps
// the prime's folder), at most `jobs` at once; worktrees go at the end.
// Every pi process is closed in every case, Ctrl-C included.
import { cpSync, existsSync, mkdirSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { newSessionFile } from "../agents/pi-run.ts";
import { writeExtension } from "../agents/pi-extension.ts";
import { probePi } from "../agents/pi-probe.ts";
import { compileSchema, type EnvelopeCheck } from "../core/envelope.ts";
import { sessionNaming, type PiCapabilities } from "../core/pi/capabilities.ts";
import { ENVELOPE_TOOL } from "../core/pi/reducer.ts";
import { piThinking, piTools } from "../core/translate.ts";
import type { ProgressSink } from "../core/progress.ts";
import { clean } from "../core/text.ts";
import { EXIT, exitCodeFor, type Status, type Tokens, type Verdict } from "../core/verdict.ts";
import { addWorktree, dirtyPaths, gitRaw, harvestPatch, removeWorktree, resetTree } from "../io/git.ts";
import { connectLedger, type FinishPhaseInput, type Ledger } from "../io/ledger.ts";
import { makeRunDir } from "../io/paths.ts";
import { signalGroup, SpawnError } from "../io/spawn.ts";
import { PiRpcClient, PiRpcError } from "../rpc/client.ts";
import type { Usage } from "../rpc/usage.ts";
import { armBrief, primeBrief, type BriefInput } from "./briefs.ts";
import { checkBatch, type Checked, type Refused } from "./check.ts";
import { runGates } from "./gates.ts";
import { buildHarvest, table, totalTokens, usd, writeHarvest, type ArmRecord, type Harvest, type PrimeRecord } from "./harvest.ts";
import type { BonOptions } from "./options.ts";

export interface BonOutcome {
  exitCode: number;
  /** The check's refusal (exit 3): nothing was written. */
  refused: Refused | null;
  harvest: Harvest | null;
  harvestFile: string | null;
}


const ZERO_TOKENS: Tokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
const round3 = (ms: number) => Math.round(ms) / 1000;
const message = (error: unknown) => clean((error as Error)?.message ?? String(error), 400);

/** A route `provider/id` as set_model wants it. */
function splitRoute(route: string): { provider: string; modelId: string } {
  const slash = route.indexOf("/");
  return slash <= 0 ? { provider: route, modelId: route } : { provider: route.slice(0, slash), modelId: route.slice(slash + 1) };
}

function changedFiles(envelope: unknown): string[] {
  const files = (envelope as { changed_files?: unknown } | null)?.changed_files;
  return Array.isArray(files) ? files.filter((f): f is string => typeof f === "string") : [];
}

function envelopeField(envelope: unknown, key: string): string | null {
  const value = (envelope as Record<string, unknown> | null)?.[key];
  return typeof value === "string" ? value : null;
}

export async function runBon(o: BonOptions): Promise<BonOutcome> {
  const startedAt = new Date();
  const checkStarted = performance.now();
  const checked = await checkBatch({ cwd: o.cwd, spec: o.spec, specDir: o.specDir, keep: [o.home, o.sessionDir] });
  if (!checked.ok) return { exitCode: EXIT.refused, refused: checked, harvest: null, harvestFile: null };
  const batchId = crypto.randomUUID();
  const setup = <T>(what: string, make: () => T): T => {
    try {
      return make();
    } catch (error) {
      throw new BonSetupError(`${what}: ${message(error)}`);
    }
  };
  const runDir = setup("the run folder", () => makeRunDir(o.home, batchId));
  const checkSeconds = round3(performance.now() - checkStarted);
  const ledger = await connectLedger(o.home).catch((error: unknown) => {
    throw new BonSetupError(`ledger: ${message(error)}`);
  });
  try {
    let caps = o.caps;
    if (caps === undefined) {
      try {
        caps = await probePi(o.bin, ledger, o.env);
      } catch (error) {
        throw new BonSetupError(`pi probe: ${message(error)}`);
      }
    }
    return await new Batch(o, ledger, caps, checked, batchId, runDir, startedAt, checkSeconds).run();
  } finally {
    await ledger.close();
  }
}

/** The batch could not be set up (state folder, ledger, pi probe): an environment fault, nothing spent. */
export class BonSetupError extends Error {}

interface Turned {
  verdict: Verdict | null;
  usage: Usage;
  reason: string;
  exitCode: number;
}

class Batch {
  private readonly clients = new Set<PiRpcClient>();
  private readonly gatePids = new Set<number>();
  private readonly worktrees = new Set<string>();
  private readonly arms: ArmRecord[] = [];
  private readonly check: (value: unknown) => EnvelopeCheck;
  private readonly extension: string;
  private readonly schemaFile: string;
  private readonly brief: BriefInput;
  private readonly primeId = crypto.randomUUID();
  private prime: PrimeRecord | null = null;
  private primeFile: string | null = null;
  private stopped: string | null = null;
  private stopCode: number = EXIT.failed;
  /** An arm is at work in the tree itself: reset it if anything goes wrong. */
  private treeBusy = false;
  /** One tree: the process that serves the prime and every arm. */
  private treeClient: PiRpcClient | null = null;
  /** One tree: where that process's progress goes now (the prime's view, then each arm's). */
  private currentSink: ProgressSink | null = null;
  private abortTimer: Timer | null = null;
  private readonly onExit = () => this.killAll();
  private readonly onAbort = () => {
    // A turn that was about to start when Ctrl-C came is caught by the next round.
    this.abortAll();
    this.abortTimer ??= setInterval(() => this.abortAll(), 1_000);
  };

  constructor(
    private readonly o: BonOptions,
    private readonly ledger: Ledger,
    private readonly caps: PiCapabilities,
    private readonly c: Checked,
    private readonly batchId: string,
    private readonly runDir: string,
    private readonly startedAt: Date,
    private readonly checkSeconds: number,
  ) {
    const compiled = compileSchema(o.schema);
    if (!compiled.ok) throw new Error(`the envelope schema: ${compiled.error}`);
    this.check = compiled.check;
    this.extension = writeExtension(join(o.home, "extensions"));
    this.schemaFile = join(runDir, "envelope.schema.json");
    writeFileSync(this.schemaFile, JSON.stringify(o.schema, null, 2));
    this.brief = { spec: c.specForAgent, specDir: c.specDirForAgent, tool: ENVELOPE_TOOL, gates: o.gates };
  }

  private get interrupted(): boolean {
    return this.o.signal?.aborted === true;
  }

  async run(): Promise<BonOutcome> {
    process.on("exit", this.onExit);
    this.o.signal?.addEventListener("abort", this.onAbort);
    let harvest: Harvest | null = null;
    let harvestFile: string | null = null;
    let exitCode: number = EXIT.failed;
    try {
      await this.recordCheck();
      const primeCode = await this.runPrime();
      if (primeCode === null) {
        if (this.o.parallel) await this.armsInWorktrees();
        else await this.armsInTree();
      }
      ({ harvest, harvestFile, exitCode } = await this.harvest(primeCode));
    } finally {
      this.o.signal?.removeEventListener("abort", this.onAbort);
      await this.cleanup();
      process.off("exit", this.onExit);
    }
    return { exitCode, refused: null, harvest, harvestFile };
  }

  // -- the ledger -------------------------------------------------------------------

  private async declare(id: string, cwd: string, model: string | null, phase: string, parentId: string | null, sessionFile: string | null = null, agentSessionId: string | null = null): Promise<void> {
    await this.ledger.declareSession({
      id,
      agent: "pi",
      cwd,
      model,
      agentSessionId,
      sessionFile,
      sessionDir: this.o.sessionDir,
      parentId,
      profile: this.o.profile?.join(",") ?? null,
      env: { AGENTPORT_PHASE: phase, AGENTPORT_RUN_ID: this.batchId },
    });
  }

  private async startPhase(sessionId: string, kind: string, name: string): Promise<number> {
    return (await this.ledger.startPhase({ sessionId, kind, name, runId: this.batchId })).id;
  }

  private async finishPhase(id: number, outcome: FinishPhaseInput): Promise<void> {
    try {
      await this.ledger.finishPhase(id, outcome);
    } catch (error) {
      this.o.say(`bon: the ledger did not take phase ${id}: ${message(error)}`);
    }
  }

  private async bind(id: string, client: { sessionId: string | null; sessionFile: string | null }): Promise<void> {
    if (client.sessionId === null) return;
    try {
      await this.ledger.bindAgentSession(id, client.sessionId, client.sessionFile);
    } catch (error) {
      this.o.say(`bon: the ledger did not bind session ${id}: ${message(error)}`);
    }
  }

  private async recordCheck(): Promise<void> {
    const naming = sessionNaming(this.caps);
    this.primeFile = naming === "session-file" ? newSessionFile(this.o.sessionDir, this.primeId, this.o.cwd) : null;
    mkdirSync(this.o.sessionDir, { recursive: true, mode: 0o700 });
    await this.declare(this.primeId, this.o.cwd, this.o.primeModel, "prime", null, this.primeFile, naming === "none" ? null : this.primeId);
    const phase = await this.startPhase(this.primeId, "check", "check");
    await this.finishPhase(phase, {
      status: "completed",
      ok: true,
      tokens: ZERO_TOKENS,
      costMicroUsd: 0,
      seconds: this.checkSeconds,
      stopReason: null,
      failure: null,
      details: { spec: this.o.spec, arms: this.o.models.length, mode: this.o.parallel ? "worktrees" : "tree", base: this.c.found.commit, run_dir: this.runDir },
    });
    this.o.say(
      `bon: check ok — ${this.c.top} at ${this.c.found.commit.slice(0, 12)}, spec ${this.c.specForAgent}, ${this.o.models.length} arms ${this.o.parallel ? `in worktrees (at most ${this.o.jobs} at once)` : "in one tree"}; run folder ${this.runDir}`,
    );
  }

  // -- pi processes ---------------------------------------------------------------------

  private envFor(label: string): Record<string, string | undefined> {
    return {
      ...this.o.env,
      AGENTPORT_INVENTORY_FILE: this.inventoryFile(label),
      AGENTPORT_PI_VERSION: this.caps.version,
      AGENTPORT_ENVELOPE_TOOL: ENVELOPE_TOOL,
      AGENTPORT_ENVELOPE_SCHEMA: this.schemaFile,
      AGENTPORT_PHASE: label,
      AGENTPORT_RUN_ID: this.batchId,
    };
  }

  private inventoryFile(label: string): string {
    return join(this.runDir, `${label}.inventory.json`);
  }

  private async startClient(label: string, cwd: string, sessionId: string, model: string | null, progress: ProgressSink, fork?: string): Promise<PiRpcClient> {
    const client = await PiRpcClient.start({
      bin: this.o.bin,
      caps: this.caps,
      cwd,
      env: this.envFor(label),
      sessionDir: this.o.sessionDir,
      sessionFile: fork === undefined ? this.primeFile : null,
      sessionId,
      model: model ?? undefined,
      gateway: "",
      direct: true,
      thinking: piThinking(this.o.thinking),
      tools: this.o.tools && piTools(this.o.tools),
      extensions: [this.extension],
      envelopeTool: ENVELOPE_TOOL,
      stderrFile: join(this.runDir, `${label}.stderr.log`),
      fork,
      commandTimeoutMs: this.o.commandTimeoutMs,
      turnTimeoutMs: this.o.turnTimeoutMs,
      stallMs: this.o.stallMs,
      loopRepeat: this.o.loopRepeat,
      budget: this.o.budget,
      maxLineBytes: this.o.maxLineBytes,
      onProgress: progress,
      inventoryFile: this.inventoryFile(label),
      graceMs: this.o.graceMs,
    });
    this.clients.add(client);
    return client;
  }

  private async closeClient(client: PiRpcClient): Promise<void> {
    await client.close();
    this.clients.delete(client);
  }

  /** One turn, judged; a pi that died during it is a failed turn, not an exception. */
  private async turn(client: PiRpcClient, text: string, route: string | null): Promise<Turned> {
    const unknown: Usage = { tokens: null, costMicroUsd: null };
    if (this.interrupted) return { verdict: null, usage: unknown, reason: "interrupted before the turn started", exitCode: EXIT.interrupted };
    try {
      const result = await client.prompt(text, { envelope: this.check, requireExt: this.o.requireExt, route: route ?? null });
      const v = result.verdict;
      // `session`: now minus when the client entered this session (a clone: at clone) — the arm's own.
      return { verdict: v, usage: result.session, reason: v.ok ? "" : (v.failure ?? v.status), exitCode: result.exitCode };
    } catch (error) {
      const verdict = error instanceof PiRpcError ? (error.details.verdict ?? null) : null;
      return { verdict, usage: unknown, reason: message(error), exitCode: verdict !== null ? exitCodeFor(verdict) : EXIT.failed };
    }
  }

  private view(label: string): { sink: ProgressSink; close(): void } {
    return this.o.view?.(label) ?? { sink: () => {}, close: () => {} };
  }

  // -- the prime -------------------------------------------------------------------------

  /** null when the prime is good and the arms may start; else the batch's exit code. */
  private async runPrime(): Promise<number | null> {
    const phase = await this.startPhase(this.primeId, "prime", "prime");
    const started = performance.now();
    const view = this.view("prime");
    const record: PrimeRecord = {
      session_id: this.primeId,
      pi_session_id: null,
      session_file: this.primeFile,
      model: this.o.primeModel,
      status: null,
      ok: false,
      tokens: null,
      tokens_detail: null,
      cost_micro_usd: null,
      seconds: 0,
      summary: null,
      reason: "",
    };
    this.prime = record;
    let exitCode: number = EXIT.failed;
    let client: PiRpcClient | null = null;
    let turned: Turned | null = null;
    try {
      this.currentSink = view.sink;
      const sink: ProgressSink = (event) => this.currentSink?.(event);
      client = await this.startClient("prime", this.o.cwd, this.primeId, this.o.primeModel, this.o.parallel ? view.sink : sink);
      await this.bind(this.primeId, client);
      record.pi_session_id = client.sessionId;
      turned = await this.turn(client, primeBrief(this.brief), this.o.primeModel);
      view.close();
      const v = turned.verdict;
      record.status = v?.status ?? (this.interrupted ? "aborted" : "crashed");
      record.tokens_detail = turned.usage.tokens ?? v?.tokens ?? null;
      record.tokens = totalTokens(record.tokens_detail);
      record.cost_micro_usd = turned.usage.costMicroUsd ?? v?.cost_micro_usd ?? null;
      record.summary = envelopeField(v?.envelope ?? null, "summary");
      record.session_file = client.sessionFile ?? record.session_file;
      record.pi_session_id = client.sessionId;
      await this.bind(this.primeId, client);
      record.reason = turned.reason;
      exitCode = turned.exitCode;
      if (!record.reason && v !== null) {
        const status = envelopeField(v.envelope, "status");
        const files = changedFiles(v.envelope);
        if (status !== "success") record.reason = `the prime reports ${status ?? "no status"}: ${clean(record.summary ?? "", 200)}`;
        else if (files.length > 0) record.reason = `the prime reports changed files (${files.slice(0, 5).join(", ")}): it must only read`;
      }
      const dirty = await dirtyPaths(this.c.top, this.c.specFolder);
      if (dirty.length > 0) {
        await resetTree(this.c.top, this.c.specFolder, this.c.found);
        record.reason ||= `the prime changed the tree (${dirty.slice(0, 5).join(", ")}); it was reset`;
      }
      if (!record.reason && (client.sessionFile === null || !existsSync(client.sessionFile))) record.reason = "pi names no session file for the prime: the arms cannot start from it";
      this.primeFile = client.sessionFile;
    } catch (error) {
      view.close();
      record.reason = message(error);
      record.status ??= "crashed";
      exitCode = error instanceof SpawnError ? EXIT.environment : EXIT.failed;
    }
    record.ok = record.reason === "";
    record.seconds = round3(performance.now() - started);
    await this.finishPhase(phase, {
      status: record.ok ? "completed" : record.status === "completed" || record.status === null ? "failed" : record.status,
      ok: record.ok,
      tokens: record.tokens_detail,
      costMicroUsd: record.cost_micro_usd,
      seconds: record.seconds,
      stopReason: turned?.verdict?.stop_reason ?? null,
      failure: record.ok ? null : record.reason,
      details: { pi_session_id: record.pi_session_id ?? "", ...(record.summary ? { summary: clean(record.summary, 400) } : {}) },
    });
    this.o.say(`bon: prime — ${record.ok ? "ok" : `failed: ${record.reason}`}; ${record.tokens ?? "?"} tokens, $${usd(record.cost_micro_usd)}, ${record.seconds.toFixed(1)} s`);
    if (this.o.parallel && client !== null) await this.closeClient(client);
    if (record.ok) {
      if (!this.o.parallel) this.treeClient = client;
      return null;
    }
    if (client !== null) await this.closeClient(client);
    this.stopped = `the prime failed: ${record.reason}`;
    if (this.interrupted) return EXIT.interrupted;
    return exitCode === EXIT.ok ? EXIT.failed : exitCode;
  }

  // -- arms ----------------------------------------------------------------------------------

  private newArm(k: number, cwd: string): ArmRecord {
    return {
      arm: k,
      model: this.o.models[k - 1] ?? null,
      session_id: null,
      pi_session_id: null,
      session_file: null,
      cwd,
      verdict: "not_run",
      status: null,
      tokens: null,
      tokens_detail: null,
      cost_micro_usd: null,
      seconds: null,
      patch: null,
      patch_bytes: 0,
      changed_files: [],
      reason: "",
    };
  }

  private notRun(k: number): void {
    const rec = this.newArm(k, this.o.cwd);
    rec.reason = this.interrupted ? "interrupted before it started" : `not run: ${this.stopped ?? "the batch stopped"}`;
    this.arms.push(rec);
  }

  private stop(reason: string, code: number = EXIT.failed): void {
    if (this.stopped !== null) return;
    this.stopped = reason;
    this.stopCode = code;
  }

  /** Judge the turn, then the gates: fills verdict, status, usage, changed files and reason. */
  private async judgeArm(rec: ArmRecord, turned: Turned, cwd: string): Promise<void> {
    const v = turned.verdict;
    rec.status = v?.status ?? (this.interrupted ? "aborted" : "crashed");
    rec.tokens_detail = turned.usage.tokens;
    rec.tokens = totalTokens(rec.tokens_detail);
    rec.cost_micro_usd = turned.usage.costMicroUsd;
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
    const gates = await runGates({
      changedFiles: rec.changed_files,
      cwd,
      commands: this.o.gates,
      timeoutMs: this.o.gateTimeoutMs,
      graceMs: this.o.graceMs ?? 2_000,
      logPrefix: join(this.runDir, `arm-${rec.arm}`),
      env: process.env,
      signal: this.o.signal,
      onProcess: (pid, running) => {
        if (running) this.gatePids.add(pid);
        else this.gatePids.delete(pid);
      },
    });
    rec.reason = gates.reason;
    if (gates.ok) rec.verdict = "green";
  }

  private async finishArm(rec: ArmRecord, phase: number, started: number, notes: string[]): Promise<void> {
    if (rec.verdict === "not_run") rec.verdict = "red";
    if (notes.length > 0) rec.reason = [rec.reason, ...notes].filter(Boolean).join("; ");
    rec.seconds = round3(performance.now() - started);
    const status: Status = rec.verdict === "green" ? "completed" : rec.status === null || rec.status === "completed" ? "failed" : rec.status;
    await this.finishPhase(phase, {
      status,
      ok: rec.verdict === "green",
      tokens: rec.tokens_detail,
      costMicroUsd: rec.cost_micro_usd,
      seconds: rec.seconds,
      stopReason: null,
      failure: rec.verdict === "green" ? null : clean(rec.reason, 600),
      details: {
        arm: rec.arm,
        verdict: rec.verdict,
        model: rec.model ?? "",
        patch_bytes: rec.patch_bytes,
        pi_session_id: rec.pi_session_id ?? "",
        changed_files: rec.changed_files.length,
      },
    });
    this.o.say(
      `bon: arm ${rec.arm} (${rec.model ?? "default model"}) — ${rec.verdict}; ${rec.tokens ?? "?"} tokens, $${usd(rec.cost_micro_usd)}, ${rec.seconds.toFixed(1)} s, patch ${rec.patch_bytes} B${rec.reason ? ` — ${clean(rec.reason, 160)}` : ""}`,
    );
  }

  private async armsInTree(): Promise<void> {
    const client = this.treeClient;
    for (let k = 1; k <= this.o.models.length; k++) {
      if (this.interrupted || this.stopped !== null || client === null) {
        this.notRun(k);
        continue;
      }
      await this.armInTree(client, k);
    }
  }

  private async armInTree(client: PiRpcClient, k: number): Promise<void> {
    const rec = this.newArm(k, this.o.cwd);
    this.arms.push(rec);
    const armId = crypto.randomUUID();
    const label = `arm-${k}`;
    rec.session_id = armId;
    await this.declare(armId, this.o.cwd, rec.model, label, this.primeId);
    const phase = await this.startPhase(armId, "arm", label);
    const started = performance.now();
    const notes: string[] = [];
    // 1. From the prime: switch back to its file (from the second arm on), clone, the arm's model.
    try {
      if (k > 1) await client.switchSession(this.primeFile ?? "");
      const cloned = await client.clone();
      rec.pi_session_id = cloned.sessionId;
      rec.session_file = cloned.sessionFile;
      await this.bind(armId, { sessionId: cloned.sessionId, sessionFile: cloned.sessionFile });
      if (rec.model !== null && (await client.state()).model !== rec.model) {
        const { provider, modelId } = splitRoute(rec.model);
        await client.setModel(provider, modelId);
      }
    } catch (error) {
      rec.reason = `the clone failed: ${message(error)}`;
      this.stop(`arm ${k}: ${rec.reason}`);
      await this.finishArm(rec, phase, started, notes);
      return;
    }
    // 2. The implementation turn, the gates; 3. harvest and reset, whatever happened.
    const view = this.view(`arm ${k}`);
    this.treeBusy = true;
    try {
      this.currentSink = view.sink;
      const turned = await this.turn(client, armBrief(this.brief), rec.model);
      view.close();
      await this.judgeArm(rec, turned, this.o.cwd);
    } finally {
      view.close();
      this.currentSink = null;
      try {
        rec.patch = join(this.runDir, `${label}.patch`);
        rec.patch_bytes = await harvestPatch(this.c.top, this.c.specFolder, this.c.found.commit, rec.patch);
      } catch (error) {
        rec.patch = null;
        notes.push(`harvest failed: ${message(error)}`);
      }
      try {
        notes.push(...(await resetTree(this.c.top, this.c.specFolder, this.c.found)));
        const dirty = await dirtyPaths(this.c.top, this.c.specFolder);
        if (dirty.length > 0) throw new Error(`still dirty: ${dirty.slice(0, 5).join(", ")}`);
        this.treeBusy = false;
      } catch (error) {
        notes.push(`the tree could not be reset: ${message(error)}`);
        this.stop(`arm ${k}: the tree could not be reset (${message(error)}); the next arms would not start from the same tree`);
      }
      if (rec.patch === null) rec.verdict = "red";
      await this.finishArm(rec, phase, started, notes);
    }
  }

  private async armsInWorktrees(): Promise<void> {
    const n = this.o.models.length;
    let next = 1;
    const worker = async () => {
      for (;;) {
        const k = next++;
        if (k > n) return;
        if (this.interrupted || this.stopped !== null) {
          this.notRun(k);
          continue;
        }
        await this.armInWorktree(k);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.o.jobs, n)) }, worker));
    this.arms.sort((a, b) => a.arm - b.arm);
  }

  private async armInWorktree(k: number): Promise<void> {
    const label = `arm-${k}`;
    const worktree = join(this.runDir, "worktrees", label);
    const cwd = this.c.cwdInTop ? join(worktree, this.c.cwdInTop) : worktree;
    const rec = this.newArm(k, cwd);
    this.arms.push(rec);
    const armId = crypto.randomUUID();
    rec.session_id = armId;
    // The session is declared (parent: the prime) before its worktree and its pi exist.
    await this.declare(armId, cwd, rec.model, label, this.primeId);
    const phase = await this.startPhase(armId, "arm", label);
    const started = performance.now();
    const notes: string[] = [];
    const view = this.view(`arm ${k}`);
    let client: PiRpcClient | null = null;
    try {
      // 1. A worktree at the base commit, with the spec folder's files; pi forked from the prime into it.
      try {
        mkdirSync(dirname(worktree), { recursive: true });
        this.worktrees.add(worktree);
        await addWorktree(this.c.top, worktree, this.c.found.commit);
        this.copySpecs(worktree);
        client = await this.startClient(label, cwd, armId, rec.model, view.sink, this.primeFile ?? "");
        rec.pi_session_id = client.sessionId;
        rec.session_file = client.sessionFile;
        await this.bind(armId, client);
        if (rec.model !== null && (await client.state()).model !== rec.model) {
          const { provider, modelId } = splitRoute(rec.model);
          await client.setModel(provider, modelId);
        }
      } catch (error) {
        rec.reason = `the fork failed: ${message(error)}`;
        this.stop(`arm ${k}: ${rec.reason}`, error instanceof SpawnError ? EXIT.environment : EXIT.failed);
        return;
      }
      // 2. The implementation turn and the gates, in the worktree.
      const turned = await this.turn(client, armBrief(this.brief), rec.model);
      view.close();
      await this.judgeArm(rec, turned, cwd);
    } finally {
      view.close();
      if (client !== null) await this.closeClient(client);
      // 3. The patch, the same way; then the worktree goes.
      if (existsSync(join(worktree, ".git"))) {
        try {
          rec.patch = join(this.runDir, `${label}.patch`);
          rec.patch_bytes = await harvestPatch(worktree, this.c.specFolder, this.c.found.commit, rec.patch);
        } catch (error) {
          rec.patch = null;
          notes.push(`harvest failed: ${message(error)}`);
        }
      }
      await this.dropWorktree(worktree);
      if (rec.patch === null && rec.verdict === "green") rec.verdict = "red";
      await this.finishArm(rec, phase, started, notes);
    }
  }

  /** The spec folder's files (untracked, so not in a fresh worktree) and the spec itself. */
  private copySpecs(worktree: string): void {
    if (this.c.specFolder !== null && existsSync(this.o.specDir)) {
      cpSync(this.o.specDir, join(worktree, this.c.specFolder), { recursive: true, force: true });
    }
    if (this.c.specInTop !== null) {
      const target = join(worktree, this.c.specInTop);
      if (!existsSync(target)) {
        mkdirSync(dirname(target), { recursive: true });
        cpSync(this.o.spec, target);
      }
    }
  }

  private async dropWorktree(worktree: string): Promise<void> {
    try {
      await removeWorktree(this.c.top, worktree);
    } catch (error) {
      this.o.say(`bon: could not remove the worktree ${worktree}: ${message(error)}`);
    }
    if (!existsSync(worktree)) this.worktrees.delete(worktree);
  }

  // -- harvest -------------------------------------------------------------------------------------

  private async harvest(primeCode: number | null): Promise<{ harvest: Harvest; harvestFile: string; exitCode: number }> {
    const started = performance.now();
    const phase = await this.startPhase(this.primeId, "harvest", "harvest");
    if (this.interrupted) this.stop("interrupted", EXIT.interrupted);
    const harvest = buildHarvest({
      batchId: this.batchId,
      spec: this.c.specForAgent,
      repo: this.c.top,
      base: this.c.found.commit,
      parallel: this.o.parallel,
      runDir: this.runDir,
      startedAt: this.startedAt,
      prime: this.prime,
      arms: this.arms,
      stopped: this.stopped,
      interrupted: this.interrupted,
    });
    const file = writeHarvest(this.runDir, harvest);
    const green = harvest.arms.filter((a) => a.verdict === "green").length;
    if (harvest.arms.length > 0) this.o.say(`\n${table(harvest.arms)}\n`);
    const paid = harvest.prime_paid;
    if (paid !== null && paid.arms > 0 && this.prime?.ok) {
      this.o.say(
        `bon: prime ${paid.tokens_once ?? "?"} tokens ($${usd(paid.cost_micro_usd_once)}), paid once — ${paid.arms} independent runs would have paid it ${paid.arms} times: ${paid.tokens_n_times ?? "?"} tokens, ~${paid.tokens_saved ?? "?"} more (an estimate, before provider caching)`,
      );
    }
    let exitCode: number;
    if (primeCode !== null) exitCode = primeCode;
    else if (this.interrupted) exitCode = EXIT.interrupted;
    else if (this.stopped !== null) exitCode = this.stopCode;
    else exitCode = harvest.winner !== null ? EXIT.ok : EXIT.failed;
    if (harvest.winner !== null) {
      this.o.say(`bon: proposed — arm ${harvest.winner.arm} (${harvest.winner.model ?? "default model"}), green and the cheapest of the ${green} green; take it with:\n  ${harvest.winner.apply}`);
    } else if (primeCode === null) {
      this.o.say(`bon: no arm is green (of ${harvest.arms.filter((a) => a.verdict !== "not_run").length}); the reasons are in ${file}`);
    }
    if (this.stopped !== null) this.o.say(`bon: the batch stopped early: ${this.stopped}`);
    await this.finishPhase(phase, {
      status: harvest.winner !== null ? "completed" : this.interrupted ? "aborted" : "failed",
      ok: harvest.winner !== null,
      tokens: ZERO_TOKENS,
      costMicroUsd: 0,
      seconds: round3(performance.now() - started),
      stopReason: null,
      failure: harvest.winner !== null ? null : (this.stopped ?? "no arm is green"),
      details: {
        arms: harvest.arms.length,
        green,
        winner: harvest.winner?.arm ?? 0,
        harvest: file,
        ...(harvest.totals.tokens !== null ? { total_tokens: harvest.totals.tokens } : {}),
        ...(harvest.totals.cost_micro_usd !== null ? { total_cost_micro_usd: harvest.totals.cost_micro_usd } : {}),
      },
    });
    return { harvest, harvestFile: file, exitCode };
  }

  // -- every case, Ctrl-C included -------------------------------------------------------------------

  private abortAll(): void {
    if (this.clients.size === 0 && this.abortTimer !== null) {
      clearInterval(this.abortTimer);
      this.abortTimer = null;
    }
    for (const client of this.clients) void client.abort().catch(() => {});
  }

  /** Synchronous, for process exit: nothing of ours may survive agentport. */
  private killAll(): void {
    for (const client of this.clients) signalGroup(client.pid, "SIGKILL");
    for (const pid of this.gatePids) signalGroup(pid, "SIGKILL");
  }

  private async cleanup(): Promise<void> {
    if (this.abortTimer !== null) clearInterval(this.abortTimer);
    this.abortTimer = null;
    await Promise.all([...this.clients].map((c) => this.closeClient(c).catch(() => {})));
    if (this.treeBusy) {
      try {
        await resetTree(this.c.top, this.c.specFolder, this.c.found);
        this.treeBusy = false;
      } catch (error) {
        this.o.say(`bon: the tree could not be reset: ${message(error)}`);
      }
    }
    for (const worktree of [...this.worktrees]) await this.dropWorktree(worktree);
    if (this.o.parallel) {
      await gitRaw(this.c.top, ["worktree", "prune"]).catch(() => {});
      try {
        rmdirSync(join(this.runDir, "worktrees"));
      } catch {
        // Not there, or a worktree could not be removed (said above).
      }
    }
  }
}
