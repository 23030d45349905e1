/**
 * bench-bon-workspace.ts — what `agentport bon` pays for its workspaces: the
 * time and disk of creating them for a batch of N arms, one after the other
 * (one workspace, reset between arms) and in parallel (one per arm, made at
 * once), on a repository you name (only read: the clones share its objects).
 *
 * Run by hand (not part of the test suite):
 *   bun run scripts/bench-bon-workspace.ts [--repo .] [--arms 3] [--copy node_modules]
 *
 * --copy PATH adds the copy of an ignored path into each workspace
 * (`cp -a --reflink=auto`, as `bon --copy` does): on a filesystem without
 * reflinks (ext4) that is a full copy.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { cloneAtHead, diskBytes, ignoredManifest, type WorkspaceTree } from "../src/bon/clone.ts";
import { head, resetTree, workTreeTop } from "../src/io/git.ts";

const { values } = parseArgs({
  options: { repo: { type: "string", default: "." }, arms: { type: "string", default: "3" }, copy: { type: "string" } },
});
const top = await workTreeTop(resolve(values.repo));
if (top === null) throw new Error(`${values.repo} is not in a git work tree`);
const found = await head(top);
if (found.commit === null) throw new Error(`${top} has no commit`);
const base = { commit: found.commit, ref: found.ref };
const arms = Number(values.arms);
const scratch = mkdtempSync(join(tmpdir(), "agentport-bench-bon-"));

async function make(name: string): Promise<WorkspaceTree> {
  const ws = { workTree: join(scratch, name), gitDir: join(scratch, `${name}.git`) };
  await cloneAtHead(top!, base, ws);
  if (values.copy !== undefined) {
    const proc = Bun.spawn(["cp", "-a", "--reflink=auto", "--", join(top!, values.copy), join(ws.workTree, values.copy)]);
    if ((await proc.exited) !== 0) throw new Error(`cp ${values.copy} failed`);
  }
  await ignoredManifest(ws, null);
  return ws;
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const ms = (t: number) => `${(performance.now() - t).toFixed(0)} ms`;

try {
  let t = performance.now();
  const shared = await make("shared");
  const sequentialMade = ms(t);
  t = performance.now();
  for (let k = 2; k <= arms; k++) await resetTree(shared, null, base);
  const resets = ms(t);
  const sequentialDisk = diskBytes(shared.workTree) + diskBytes(shared.gitDir);

  t = performance.now();
  const each = await Promise.all(Array.from({ length: arms }, (_, i) => make(`arm-${i + 1}`)));
  const parallelMade = ms(t);
  const parallelDisk = each.reduce((sum, ws) => sum + diskBytes(ws.workTree) + diskBytes(ws.gitDir), 0);
  const gitDirs = each.reduce((sum, ws) => sum + diskBytes(ws.gitDir), 0);

  console.log(`repository ${top} at ${base.commit.slice(0, 12)}; ${arms} arms${values.copy ? `; --copy ${values.copy}` : ""}`);
  console.log(`| mode | workspaces | made in | disk |`);
  console.log(`|---|---|---|---|`);
  console.log(`| sequential | 1 (+ ${arms - 1} resets: ${resets}) | ${sequentialMade} | ${mib(sequentialDisk)} |`);
  console.log(`| parallel | ${arms}, at once | ${parallelMade} | ${mib(parallelDisk)} (git folders: ${mib(gitDirs)}) |`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
