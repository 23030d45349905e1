// One workspace: a clone of the user's repository at HEAD in the run folder
// (src/bon/clone.ts), with the spec folder's files, the `--copy` paths
// copied in (copy-on-write where the filesystem allows, never linked back)
// and the `--setup` commands run; then what an arm did in it (its patch, its
// ignored changes, what it did to `.git`), its reset for the next arm, its
// removal. Each workspace is a ledger phase of the prime's session, finished
// when it is removed: one left open belongs to a batch that was killed.
import { cpSync, existsSync, lstatSync, mkdirSync, realpathSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { dirtyPaths, harvestPatch, resetTree, type Head } from "../io/git.ts";
import {
  cloneAtHead,
  ignoredManifest,
  manifestChanges,
  removeTree,
  restoreControl,
  type Control,
  type IgnoredChange,
  type Manifest,
  type WorkspaceTree,
} from "./clone.ts";
import { commandEnv, round3, trackProcess, WORKSPACES, type BatchContext } from "./context.ts";
import { runSteps } from "./gates.ts";
import { errorMessage } from "./sessions.ts";

export interface Workspace {
  /** `shared` (one after the other) or `arm-k`. */
  name: string;
  tree: WorkspaceTree;
  /** The agent's folder in it. */
  cwd: string;
  /** What a reset goes back to. */
  found: Head;
  control: Control;
  /** The ignored files once prepared: what an arm's ignored changes are measured against. */
  manifest: Manifest;
  /** Its ledger phase. */
  phase: number;
  started: number;
  /** How long the clone, the copy and the setup took, first time round. */
  preparedSeconds: number;
}

/** The workspace could not be made, prepared or reset. */
export class WorkspaceError extends Error {}

export const treeOf = (runDir: string, name: string): WorkspaceTree => ({
  workTree: join(runDir, WORKSPACES, name),
  gitDir: join(runDir, WORKSPACES, `${name}.git`),
});

/** The agent's folder in workspace `name`, known before it exists (the session is declared first). */
export const cwdIn = (ctx: BatchContext, name: string): string => {
  const top = treeOf(ctx.runDir, name).workTree;
  return ctx.c.cwdInTop ? join(top, ctx.c.cwdInTop) : top;
};

export async function makeWorkspace(ctx: BatchContext, name: string): Promise<Workspace> {
  const tree = treeOf(ctx.runDir, name);
  const started = performance.now();
  const phase = await ctx.recorder.start(ctx.primeId, "workspace", name);
  try {
    let control: Control;
    try {
      control = await cloneAtHead(ctx.c.top, ctx.c.found, tree);
    } catch (error) {
      throw new WorkspaceError(`the clone of ${ctx.c.top} failed: ${errorMessage(error)}`);
    }
    const found: Head = { commit: ctx.c.found.commit, ref: ctx.c.found.ref };
    const ws: Workspace = { name, tree, cwd: cwdIn(ctx, name), found, control, manifest: new Map(), phase, started, preparedSeconds: 0 };
    await fill(ctx, ws);
    ws.preparedSeconds = round3(performance.now() - started);
    return ws;
  } catch (error) {
    const reason = error instanceof WorkspaceError ? error.message : errorMessage(error);
    await finishRow(ctx, { tree, phase, started }, reason);
    throw error instanceof WorkspaceError ? error : new WorkspaceError(reason);
  }
}

/** The spec folder's files, the copied paths, the setup; then the ignored files as prepared. */
async function fill(ctx: BatchContext, ws: Workspace): Promise<void> {
  try {
    copySpecs(ctx, ws.tree.workTree);
    for (const path of ctx.o.copy) await copyPath(path, join(ws.tree.workTree, relative(ctx.c.top, path)));
  } catch (error) {
    throw new WorkspaceError(`--copy: ${errorMessage(error)}`);
  }
  if (ctx.o.setup.length > 0) {
    const setup = await runSteps("setup", {
      cwd: ws.cwd,
      commands: ctx.o.setup,
      timeoutMs: ctx.o.gateTimeoutMs,
      graceMs: ctx.o.graceMs ?? 2_000,
      logPrefix: join(ctx.runDir, ws.name),
      env: commandEnv(ctx),
      signal: ctx.o.signal,
      onProcess: trackProcess(ctx),
    });
    if (!setup.ok) throw new WorkspaceError(setup.reason);
    const dirty = await dirtyPaths(ws.tree, ctx.c.specFolder);
    if (dirty.length > 0)
      throw new WorkspaceError(
        `setup changed what a patch would carry (${dirty.slice(0, 5).join(", ")}): setup may write only ignored paths`,
      );
  }
  ws.manifest = await ignoredManifest(ws.tree, ctx.c.specFolder);
}

/** The spec folder's files (untracked, so not in the clone) and the spec itself. */
function copySpecs(ctx: BatchContext, workTree: string): void {
  if (ctx.c.specFolder !== null && existsSync(ctx.o.specDir)) {
    cpSync(ctx.o.specDir, join(workTree, ctx.c.specFolder), { recursive: true, force: true });
  }
  if (ctx.c.specInTop !== null) {
    const target = join(workTree, ctx.c.specInTop);
    if (!existsSync(target)) {
      mkdirSync(dirname(target), { recursive: true });
      cpSync(ctx.o.spec, target);
    }
  }
}

/** `cp -a --reflink=auto`: copy-on-write where the filesystem can; a symlinked path is copied from what it points to. */
async function copyPath(source: string, target: string): Promise<void> {
  const from = lstatSync(source).isSymbolicLink() ? realpathSync(source) : source;
  mkdirSync(dirname(target), { recursive: true });
  const proc = Bun.spawn(["cp", "-a", "--reflink=auto", "--", from, target], { stdin: "ignore", stdout: "ignore", stderr: "pipe" });
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`cp ${source}: exit ${code}: ${stderr.trim().split("\n").slice(-1)[0] ?? ""}`);
}

export interface Harvested {
  /** null when the patch could not be made. */
  patch: string | null;
  patchBytes: number;
  ignored: IgnoredChange[];
  /** What was put back (`.git/config`, …) and what failed, for the arm's reason. */
  notes: string[];
}

/** What the arm did: `.git` put back first (so nothing it wrote there shapes our git), then its ignored changes and its patch. */
export async function harvestWorkspace(ctx: BatchContext, ws: Workspace, label: string): Promise<Harvested> {
  const notes: string[] = [];
  const restored = restoreControl(ws.tree, ws.control);
  if (restored.length > 0) notes.push(`the arm changed ${restored.join(", ")}: put back, not in the patch`);
  let ignored: IgnoredChange[] = [];
  try {
    ignored = manifestChanges(ws.manifest, await ignoredManifest(ws.tree, ctx.c.specFolder, ws.manifest));
  } catch (error) {
    notes.push(`the ignored files could not be listed: ${errorMessage(error)}`);
  }
  const patch = join(ctx.runDir, `${label}.patch`);
  try {
    const patchBytes = await harvestPatch(ws.tree, ctx.c.specFolder, ctx.c.found.commit, patch, ctx.c.copyInTop);
    return { patch, patchBytes, ignored, notes };
  } catch (error) {
    notes.push(`harvest failed: ${errorMessage(error)}`);
    return { patch: null, patchBytes: 0, ignored, notes };
  }
}

/**
 * The workspace as prepared, for the next arm: `.git` put back, the tree back
 * to its commit; when ignored files differ too (the arm's, or its gates'), the
 * ignored files go as well and the copy and the setup run again. Notes for
 * the arm; a WorkspaceError when it cannot be made clean.
 */
export async function resetWorkspace(ctx: BatchContext, ws: Workspace): Promise<string[]> {
  try {
    restoreControl(ws.tree, ws.control);
    const notes = await resetTree(ws.tree, ctx.c.specFolder, ws.found);
    const ignored = manifestChanges(ws.manifest, await ignoredManifest(ws.tree, ctx.c.specFolder, ws.manifest));
    if (ignored.length > 0) {
      await resetTree(ws.tree, ctx.c.specFolder, ws.found, true);
      await fill(ctx, ws);
      notes.push(`ignored files differed (${ignored.length}): the workspace was prepared again`);
    }
    const dirty = await dirtyPaths(ws.tree, ctx.c.specFolder);
    if (dirty.length > 0) throw new Error(`still dirty: ${dirty.slice(0, 5).join(", ")}`);
    return notes;
  } catch (error) {
    throw new WorkspaceError(error instanceof WorkspaceError ? error.message : `the workspace could not be reset: ${errorMessage(error)}`);
  }
}

/** Remove the workspace and finish its ledger phase. */
export async function removeWorkspace(ctx: BatchContext, ws: Workspace): Promise<void> {
  await finishRow(ctx, ws, null);
}

async function finishRow(
  ctx: BatchContext,
  ws: Pick<Workspace, "tree" | "phase" | "started"> & { preparedSeconds?: number },
  why: string | null,
): Promise<void> {
  try {
    removeTree(ws.tree);
  } catch (error) {
    // Its phase stays open: the next batch tries again.
    ctx.o.say(`bon: could not remove ${ws.tree.workTree}: ${errorMessage(error)}`);
    return;
  }
  const failure = why;
  await ctx.recorder.finish(ws.phase, {
    status: failure === null ? "completed" : "failed",
    ok: failure === null,
    tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
    costMicroUsd: 0,
    seconds: round3(performance.now() - ws.started),
    stopReason: null,
    failure,
    details: { path: ws.tree.workTree, ...(ws.preparedSeconds !== undefined ? { prepared_seconds: ws.preparedSeconds } : {}) },
  });
}
