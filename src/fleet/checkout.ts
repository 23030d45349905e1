// An attempt's workspace: the task's code cloned into it (from its
// repository, or its bundle written beside it), and what the task keeps of it
// afterwards (the workspace's patch, the run's stream), bounded as db.ts says.
import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { harvestPatch } from "../io/git.ts";
import { RUN_FILES } from "../io/run-folder.ts";
import { STORED_MAX_BYTES } from "./db.ts";
import type { Kept, Queue, Task } from "./queue.ts";

/** A git command, awaited (the heartbeat beats on during a long clone); why it failed, or null. */
async function git(args: string[], cwd?: string): Promise<string | null> {
  const child = Bun.spawn(["git", ...args], {
    cwd,
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
    env: { ...process.env, GIT_TERMINAL_PROMPT: "0" },
  });
  const [stderr, code] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  return code === 0 ? null : stderr.trim().split("\n").at(-1) || `git ${args[0]} failed`;
}

/** Clone the task's code into `workspace` (from its repository, or its bundle written beside it); why not, or null. */
export async function checkout(queue: Queue, task: Task, workspace: string): Promise<string | null> {
  let source = task.repo;
  if (task.bundle_bytes !== null) {
    source = `${workspace}.bundle`;
    writeFileSync(source, (await queue.bundle(task.id)) ?? new Uint8Array());
  }
  try {
    const failed = await git(["clone", "--quiet", "--no-hardlinks", source, workspace]);
    if (failed !== null || task.ref === null) return failed;
    // A tag, a commit, a local branch, or a branch only the clone's origin has.
    const commit = [task.ref, `origin/${task.ref}`].map((r) => revParse(workspace, `${r}^{commit}`)).find((c) => c !== null);
    return commit === undefined ? `no ref ${task.ref} in it` : await git(["checkout", "--quiet", "--detach", commit], workspace);
  } finally {
    if (source !== task.repo) rmSync(source, { force: true });
  }
}

export function revParse(workspace: string, rev: string): string | null {
  const done = Bun.spawnSync(["git", "rev-parse", "--verify", "-q", "--end-of-options", rev], {
    cwd: workspace,
    stdout: "pipe",
    stderr: "ignore",
  });
  return done.exitCode === 0 ? done.stdout.toString().trim() : null;
}

const keep = (file: string): Kept => {
  const bytes = statSync(file).size;
  return { bytes, gzipped: bytes > STORED_MAX_BYTES ? null : Bun.gzipSync(readFileSync(file)) };
};

/** The workspace's changes against the commit checked out (as bon harvests them); null when git cannot say. */
export async function patchOf(workspace: string, base: string | null): Promise<Kept | null> {
  if (base === null) return null;
  const file = `${workspace}.patch`;
  try {
    await harvestPatch(workspace, null, base, file);
    return keep(file);
  } catch {
    return null;
  } finally {
    rmSync(file, { force: true });
  }
}

/** The run's redacted stream: stream.jsonl of its run folder; null when it has none. */
export function streamOf(runDir: string | null): Kept | null {
  if (runDir === null) return null;
  try {
    return keep(join(runDir, RUN_FILES.stream));
  } catch {
    return null;
  }
}
