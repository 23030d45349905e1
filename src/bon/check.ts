// The batch's first phase, zero tokens: inside a git work tree with a commit,
// the tree clean except untracked files under the spec folder (the arms start
// from HEAD and the winner's patch applies to it: what is not committed would
// be neither seen nor kept), the spec there and not empty, each --copy path
// ignored by git. A refusal names why, and the dirty paths. Only reads.
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { dirtyPaths, gitRaw, head, workTreeTop, type Head } from "../io/git.ts";

export interface CheckInput {
  /** Absolute, symlinks resolved. */
  cwd: string;
  /** Absolute. */
  spec: string;
  /** Absolute. */
  specDir: string;
  /** Folders the batch writes to while it runs (the state folder, pi's sessions): outside the tree, or ignored by git, else the batch would dirty the checkout it must only read. */
  keep?: string[];
  /** --copy paths (absolute): inside the tree, there, and ignored by git. */
  copy?: string[];
}

export interface Checked {
  ok: true;
  /** The top of the work tree. */
  top: string;
  /** HEAD when the batch started: what every arm starts from, and what the tree goes back to. */
  found: Head & { commit: string };
  /** The spec folder relative to the top (`/`-separated), or null when it lies outside the tree. */
  specFolder: string | null;
  /** The agent's folder relative to the top ("" at the top). */
  cwdInTop: string;
  /** The spec relative to the top, or null when it lies outside the tree. */
  specInTop: string | null;
  /** The spec as the agent opens it: relative to its folder when under it, else absolute. */
  specForAgent: string;
  /** The spec folder as the agent sees it. */
  specDirForAgent: string;
  specBytes: number;
  /** The --copy paths relative to the top: never in a patch. */
  copyInTop: string[];
}

export interface Refused {
  ok: false;
  reason: string;
  /** `XY path` lines, when the tree is dirty. */
  dirty: string[];
}

const slash = (p: string) => p.split(sep).join("/");

/** `path` relative to `base`, or null when it is not under it. */
function inside(base: string, path: string): string | null {
  const rel = relative(base, path);
  if (rel === "") return "";
  if (rel.startsWith("..") || isAbsolute(rel)) return null;
  return slash(rel);
}

/** An absolute path with its existing part's symlinks resolved (the tree's top is). */
function real(path: string): string {
  if (existsSync(path)) return realpathSync(path);
  const parent = dirname(path);
  return parent === path ? path : join(real(parent), basename(path));
}

export async function checkBatch(input: CheckInput): Promise<Checked | Refused> {
  const refuse = (reason: string, dirty: string[] = []): Refused => ({ ok: false, reason, dirty });
  const topRaw = await workTreeTop(input.cwd);
  if (topRaw === null)
    return refuse(`${input.cwd} is not inside a git work tree: each arm works in a clone of it and its patch is harvested with git`);
  const top = real(resolve(topRaw));
  const found = await head(top);
  if (found.commit === null) return refuse(`the repository at ${top} has no commit yet: each arm works in a clone of HEAD`);

  const specDir = real(input.specDir);
  const specFolder = inside(top, specDir);
  if (specFolder === "")
    return refuse(
      `the spec folder ${specDir} is the top of the work tree: it would exclude everything from the patches (use a subfolder, e.g. specs/)`,
    );
  const dirty = await dirtyPaths(top, specFolder);
  if (dirty.length > 0) {
    return refuse(
      `the work tree is not clean: commit or stash first — the arms start from HEAD and the winner's patch applies to it; only untracked files under ${specFolder ?? "the spec folder"}/ are tolerated`,
      dirty,
    );
  }

  for (const folder of input.keep ?? []) {
    const rel = inside(top, real(folder));
    if (rel === null || (specFolder !== null && rel.startsWith(`${specFolder}/`))) continue;
    if (rel === "" || !(await ignored(top, `${rel}/.agentport`))) {
      return refuse(
        `${folder} is inside the work tree and not ignored by git: the batch's files would dirty the checkout it must only read — use a folder outside the tree, or ignore it in .gitignore`,
      );
    }
  }

  for (const path of input.copy ?? []) {
    const refusal = await copyRefusal(top, path);
    if (refusal !== null) return refuse(refusal);
  }

  const spec = real(input.spec);
  const shown = inside(input.cwd, spec) || spec;
  if (!existsSync(spec) || !statSync(spec).isFile()) return refuse(`the spec ${shown} does not exist (or is not a file)`);
  const specBytes = statSync(spec).size;
  if (specBytes === 0 || (await Bun.file(spec).text()).trim() === "") return refuse(`the spec ${shown} is empty`);

  const cwdInTop = inside(top, input.cwd) ?? "";
  const specFromCwd = inside(input.cwd, spec);
  const specDirFromCwd = inside(input.cwd, specDir);
  return {
    ok: true,
    top,
    found: { commit: found.commit, ref: found.ref },
    specFolder,
    cwdInTop,
    specInTop: inside(top, spec),
    specForAgent: specFromCwd !== null && specFromCwd !== "" ? specFromCwd : spec,
    specDirForAgent: specDirFromCwd !== null && specDirFromCwd !== "" ? specDirFromCwd : specDir,
    specBytes,
    copyInTop: (input.copy ?? []).map((p) => copyInTop(top, p) ?? p),
  };
}

/** A --copy path relative to the top; the path itself may be a symlink (node_modules often is): only its folder is resolved. */
const copyInTop = (top: string, path: string): string | null => inside(top, join(real(dirname(path)), basename(path)));

/** Why `--copy path` cannot be, or null. */
async function copyRefusal(top: string, path: string): Promise<string | null> {
  const rel = copyInTop(top, path);
  if (rel === null || rel === "" || rel === ".git" || rel.startsWith(".git/"))
    return `--copy ${path}: not a path inside the work tree ${top}`;
  if (!existsSync(path)) return `--copy ${path}: does not exist`;
  const tracked = (await gitRaw(top, ["ls-files", "-z", "--", `:(literal)${rel}`])).stdout.byteLength > 0;
  if (tracked || !(await ignored(top, rel)))
    return `--copy ${rel}: not ignored by git — tracked files are in every workspace already, and an untracked one would be in every patch; --copy is for ignored paths such as node_modules`;
  return null;
}

/** Whether git ignores `path` (top-relative). */
async function ignored(top: string, path: string): Promise<boolean> {
  return (await gitRaw(top, ["check-ignore", "-q", "--no-index", "--", path])).code === 0;
}
