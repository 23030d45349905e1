// What a run did to its folder, observed: the folder's files as a git tree
// when the run starts (once per agentport process and folder: a nudge's phase
// measures from the run's start) and after each phase, compared the way bon
// measures a patch (`git add -A`, tracked and untracked files, ignored ones
// left out) — on a copy of the index, so the user's index is never touched —
// and the files --expect-file names checked for a write since the start.
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { numstatChanges, type Expectations, type Observed } from "../core/evidence.ts";
import { git, workTreeTop } from "./git.ts";

/** A file's mtime comes from the kernel's coarse clock, which may lag Date.now() by a tick (10 ms at 100 Hz): allowed for. */
const MTIME_SLACK_MS = 10;

interface Baseline {
  cwd: string;
  startMs: number;
  /** The folder's tree at the start, or null outside a git work tree (or when git could not say). */
  tree: string | null;
}

const baselines = new Map<string, Promise<Baseline>>();

/** The run's starting point in `cwd`: taken on the first call of this process, the same one after. */
export function baseline(cwd: string): Promise<Baseline> {
  let found = baselines.get(cwd);
  if (found === undefined) {
    const startMs = Date.now();
    found = snapshot(cwd).then((tree) => ({ cwd, startMs, tree }));
    baselines.set(cwd, found);
  }
  return found;
}

/** What the run changed since its baseline, and which expected files it did not write. */
export async function observe(base: Baseline, expect: Expectations | undefined): Promise<Observed> {
  const tree = base.tree === null ? null : await snapshot(base.cwd);
  const changes = base.tree === null || tree === null ? null : await diffTrees(base.cwd, base.tree, tree);
  const unwritten = (expect?.files ?? []).filter((path) => !writtenSince(resolve(base.cwd, path), base.startMs));
  return { changes, unwritten };
}

function writtenSince(path: string, startMs: number): boolean {
  try {
    const stat = statSync(path);
    return stat.isFile() && stat.mtimeMs >= startMs - MTIME_SLACK_MS;
  } catch {
    return false;
  }
}

/** The folder's files (tracked and untracked, not ignored) as a tree id, written through a copy of the index; null outside a work tree. */
async function snapshot(cwd: string): Promise<string | null> {
  if ((await workTreeTop(cwd)) === null) return null;
  const dir = mkdtempSync(join(tmpdir(), "agentport-evidence-"));
  const index = join(dir, "index");
  try {
    // The repository's index keeps the files' stat data: only what changed is read again.
    const own = resolve(cwd, (await git(cwd, ["rev-parse", "--git-path", "index"])).trim());
    if (existsSync(own)) copyFileSync(own, index);
    else await git(cwd, ["read-tree", "--empty"], index);
    await git(cwd, ["add", "-A", "--", "."], index);
    return (await git(cwd, ["write-tree"], index)).trim();
  } catch {
    // A repository git cannot snapshot (an unmerged index, a broken object store): no figure rather than a wrong one.
    return null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function diffTrees(cwd: string, before: string, after: string) {
  try {
    return numstatChanges(
      await git(cwd, ["diff", "--numstat", "--no-renames", "--no-ext-diff", "--no-textconv", before, after, "--", "."]),
    );
  } catch {
    return null;
  }
}
