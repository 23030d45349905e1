// Workspaces of batches that were killed (kill -9, a crash): each workspace is
// a ledger phase of its batch's prime, finished when it is removed; a batch's
// run folder names its owner (pid and start time, so a reused pid is not
// mistaken for it). Before it starts, a batch removes every workspace of the
// ledger that is still there and whose owner is gone, and finishes its phase
// if nothing else did (the ledger's own tidy-up may have finished it as
// interrupted already).
import { existsSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isRunning, processStart } from "../io/proc.ts";
import { endedUncounted, type Ledger } from "../io/ledger.ts";
import { removeTree } from "./clone.ts";
import { errorMessage } from "./sessions.ts";
import { WORKSPACES } from "./context.ts";
import { treeOf } from "./workspace.ts";

const OWNER_FILE = "owner.json";
/** How far back the ledger is searched for open workspaces (the newest sessions). */
const LOOKBACK = 500;

/** This process owns the batch whose run folder this is. */
export function claimRunDir(runDir: string): void {
  writeFileSync(join(runDir, OWNER_FILE), JSON.stringify({ pid: process.pid, start: processStart(process.pid) }), { mode: 0o600 });
}

function ownerAlive(runDir: string): boolean {
  const file = join(runDir, OWNER_FILE);
  if (!existsSync(file)) return false;
  try {
    const owner = JSON.parse(readFileSync(file, "utf8")) as { pid?: unknown; start?: unknown };
    if (typeof owner.pid !== "number" || !isRunning(owner.pid)) return false;
    return owner.start === null || owner.start === processStart(owner.pid);
  } catch {
    return false;
  }
}

function rmdirIfEmpty(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length === 0) rmdirSync(dir);
}

export interface StaleWorkspace {
  batchId: string;
  phaseId: number;
  path: string;
  /** Its phase is still open (not finished by anyone). */
  open: boolean;
}

/** Workspaces still on disk of batches whose owner is gone. */
export async function staleWorkspaces(ledger: Ledger): Promise<(StaleWorkspace & { runDir: string; name: string })[]> {
  const stale: (StaleWorkspace & { runDir: string; name: string })[] = [];
  for (const session of await ledger.listSessions({ agent: "pi", limit: LOOKBACK })) {
    if (session.phase !== "prime" || session.run_id === null) continue;
    const phases = await ledger.phases(session.id);
    const runDir = phases.find((p) => p.kind === "check")?.details?.run_dir;
    if (typeof runDir !== "string") continue;
    const left = phases.filter(
      (p) =>
        p.kind === "workspace" &&
        p.name !== null &&
        (existsSync(treeOf(runDir, p.name).workTree) || existsSync(treeOf(runDir, p.name).gitDir)),
    );
    if (left.length === 0 || ownerAlive(runDir)) continue;
    for (const p of left)
      stale.push({
        batchId: session.run_id,
        phaseId: p.id,
        runDir,
        name: p.name!,
        path: treeOf(runDir, p.name!).workTree,
        open: p.ended_at === null,
      });
  }
  return stale;
}

/** Remove the stale workspaces; what was removed. */
export async function reapStale(ledger: Ledger, batchId: string, say: (line: string) => void): Promise<StaleWorkspace[]> {
  const removed: StaleWorkspace[] = [];
  for (const ws of await staleWorkspaces(ledger)) {
    try {
      removeTree(treeOf(ws.runDir, ws.name));
      rmdirIfEmpty(join(ws.runDir, WORKSPACES));
      if (ws.open)
        await ledger.finishPhase(
          ws.phaseId,
          endedUncounted("aborted", `its batch was killed; removed by batch ${batchId}`, null, { path: ws.path, reaped_by: batchId }),
        );
      removed.push(ws);
    } catch (error) {
      say(`bon: could not remove the stale workspace ${ws.path}: ${errorMessage(error)}`);
    }
  }
  if (removed.length > 0)
    say(`bon: removed ${removed.length} workspace(s) of interrupted batches: ${removed.map((w) => w.path).join(", ")}`);
  return removed;
}
