// A workspace's git: a clone of the user's repository at HEAD that shares its
// objects (an alternates file: nothing copied, nothing of the user's written)
// and keeps its git folder beside the work tree, in the run folder. agentport
// always names both (`--git-dir`, `--work-tree`), so an arm that rewrites or
// deletes the work tree's `.git` only breaks its own git; the git folder's
// control files (config, info/exclude, …) are put back before agentport's git
// reads the workspace again. Also: the ignored files, fingerprinted, to say
// what an arm changed that no patch carries.
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  type Stats,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { git, type Head } from "../io/git.ts";

export interface WorkspaceTree {
  workTree: string;
  gitDir: string;
}

/** The git folder's files that shape what git does or sees, as created; null: absent. */
const CONTROL = ["config", "info/exclude", "info/attributes", "info/grafts", "objects/info/alternates", "commondir", "shallow"] as const;

export interface Control {
  files: Map<string, Buffer | null>;
  /** The work tree's `.git` file: `gitdir: …`. */
  pointer: Buffer;
}

/** A clone of `base` (HEAD of the user's checkout at `userTop`) at `ws`; on the same branch name when HEAD names one. */
export async function cloneAtHead(userTop: string, base: Head & { commit: string }, ws: WorkspaceTree): Promise<Control> {
  const common = (await git(userTop, ["rev-parse", "--path-format=absolute", "--git-common-dir"])).trim();
  mkdirSync(dirname(ws.workTree), { recursive: true, mode: 0o700 });
  await git(dirname(ws.workTree), ["init", "-q", "--template=", `--separate-git-dir=${ws.gitDir}`, ws.workTree]);
  mkdirSync(join(ws.gitDir, "objects", "info"), { recursive: true });
  writeFileSync(join(ws.gitDir, "objects", "info", "alternates"), `${join(common, "objects")}\n`);
  // What the user's git ignores stays ignored; a shallow history stays shallow.
  for (const name of ["info/exclude", "shallow"]) {
    const source = join(common, name);
    if (!existsSync(source)) continue;
    mkdirSync(dirname(join(ws.gitDir, name)), { recursive: true });
    writeFileSync(join(ws.gitDir, name), readFileSync(source));
  }
  if (base.ref !== null) {
    await git(ws, ["update-ref", base.ref, base.commit]);
    await git(ws, ["symbolic-ref", "HEAD", base.ref]);
  } else {
    await git(ws, ["update-ref", "--no-deref", "HEAD", base.commit]);
  }
  await git(ws, ["reset", "-q", "--hard"]);
  const files = new Map<string, Buffer | null>();
  for (const name of CONTROL) {
    const path = join(ws.gitDir, name);
    files.set(name, existsSync(path) ? readFileSync(path) : null);
  }
  return { files, pointer: readFileSync(join(ws.workTree, ".git")) };
}

/** Put the control files and the `.git` pointer back as created; what had changed, for the arm's reason. */
export function restoreControl(ws: WorkspaceTree, control: Control): string[] {
  const changed: string[] = [];
  for (const [name, bytes] of control.files) {
    const path = join(ws.gitDir, name);
    const now = existsSync(path) && statSync(path).isFile() ? readFileSync(path) : existsSync(path) ? Buffer.from("\0dir") : null;
    if (now === null && bytes === null) continue;
    if (now !== null && bytes !== null && now.equals(bytes)) continue;
    changed.push(`.git/${name}`);
    rmSync(path, { recursive: true, force: true });
    if (bytes !== null) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, bytes);
    }
  }
  const pointer = join(ws.workTree, ".git");
  const isFile = existsSync(pointer) && lstatSync(pointer).isFile();
  if (!isFile || !readFileSync(pointer).equals(control.pointer)) {
    changed.push(existsSync(pointer) ? ".git (replaced)" : ".git (deleted)");
    rmSync(pointer, { recursive: true, force: true });
    writeFileSync(pointer, control.pointer);
  }
  return changed;
}

/** Each ignored file (top-relative) and its fingerprint: mode, size, mtime, a symlink's target. */
export type Manifest = Map<string, string>;

/** `known`: the paths ignored before, looked at whatever the ignore rules say now (an arm may have changed .gitignore). */
export async function ignoredManifest(ws: WorkspaceTree, specFolder: string | null, known: Manifest = new Map()): Promise<Manifest> {
  const out = await git(ws, ["ls-files", "-z", "--others", "--ignored", "--exclude-standard"]);
  const manifest: Manifest = new Map();
  for (const path of new Set([...out.split("\0"), ...known.keys()])) {
    if (path === "" || (specFolder !== null && (path === specFolder || path.startsWith(`${specFolder}/`)))) continue;
    try {
      const full = join(ws.workTree, path);
      const st = lstatSync(full);
      manifest.set(path, `${st.mode}:${st.size}:${st.mtimeMs}${st.isSymbolicLink() ? `:${readlinkSync(full)}` : ""}`);
    } catch {
      // Gone between the listing and the look: it is not there.
    }
  }
  return manifest;
}

export interface IgnoredChange {
  path: string;
  change: "added" | "changed" | "deleted";
}

/** What differs between two manifests, sorted by path. */
export function manifestChanges(before: Manifest, after: Manifest): IgnoredChange[] {
  const changes: IgnoredChange[] = [];
  for (const [path, print] of after) {
    const was = before.get(path);
    if (was === undefined) changes.push({ path, change: "added" });
    else if (was !== print) changes.push({ path, change: "changed" });
  }
  for (const path of before.keys()) if (!after.has(path)) changes.push({ path, change: "deleted" });
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Remove a workspace whatever an arm did to it (read-only folders included). */
export function removeTree(ws: WorkspaceTree): void {
  for (const path of [ws.workTree, ws.gitDir]) {
    try {
      rmSync(path, { recursive: true, force: true });
    } catch {
      makeWritable(path);
      rmSync(path, { recursive: true, force: true });
    }
  }
}

function makeWritable(path: string): void {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (!st.isDirectory()) return;
  chmodSync(path, 0o700);
  for (const entry of readdirSync(path)) makeWritable(join(path, entry));
}

/** How many bytes a folder holds on disk (blocks, not apparent size). */
export function diskBytes(path: string): number {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return 0;
  }
  let bytes = st.blocks * 512;
  if (st.isDirectory()) for (const entry of readdirSync(path)) bytes += diskBytes(join(path, entry));
  return bytes;
}
