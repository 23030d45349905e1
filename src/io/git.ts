// git, as a best-of-N batch needs it: where the work tree is and whether it is
// clean, an arm's patch (everything but the spec folder, binary-safe), the
// tree put back to its commit, the winner applied. Every command runs with a
// fixed set of `-c` overrides — no fsmonitor, no hooks, no pager, no prompt —
// so neither a user's settings nor an arm's edits to a workspace's .git/config
// can run a command or change a patch; a failure is a GitError that names the
// command and the tail of its stderr. Workspaces: src/io/workspace-git.ts.
import { existsSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { clean } from "../core/text.ts";

export class GitError extends Error {
  constructor(
    message: string,
    readonly args: string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

export interface GitRun {
  code: number;
  stdout: Uint8Array;
  stderr: string;
}

/**
 * Where git runs: a work tree found the usual way (the user's checkout), or a
 * work tree and the git folder agentport keeps for it (a workspace: what its
 * `.git` says is not trusted).
 */
export type GitPlace = string | { workTree: string; gitDir: string };

// No command of a repository's config or hooks runs (fsmonitor, hooks); the
// user's config must not shape what we parse or harvest; no pager.
const OVERRIDES = [
  "--no-pager",
  ...[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "color.ui=false",
    "core.quotepath=false",
    "diff.noprefix=false",
    "diff.mnemonicPrefix=false",
    "diff.relative=false",
  ].flatMap((c) => ["-c", c]),
];

function gitEnv(): Record<string, string | undefined> {
  // No prompt for credentials, no editor, no optional index write in the user's repo; GIT_DIR & co. would point git elsewhere.
  const env: Record<string, string | undefined> = {
    ...process.env,
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "",
    SSH_ASKPASS: "",
    GIT_PAGER: "cat",
    GIT_EDITOR: "true",
    GIT_OPTIONAL_LOCKS: "0",
    LC_ALL: "C",
  };
  for (const key of [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
  ])
    delete env[key];
  return env;
}

const placed = (where: GitPlace): { cwd: string; pre: string[] } =>
  typeof where === "string"
    ? { cwd: where, pre: [] }
    : { cwd: where.workTree, pre: [`--git-dir=${where.gitDir}`, `--work-tree=${where.workTree}`] };

/** Run git at `where` (with `index`: on that index file instead of the repository's); never throws for a non-zero exit (see `git`). */
export async function gitRaw(where: GitPlace, args: string[], index?: string): Promise<GitRun> {
  const { cwd, pre } = placed(where);
  let proc: Bun.Subprocess<"ignore", "pipe", "pipe">;
  try {
    const env = index === undefined ? gitEnv() : { ...gitEnv(), GIT_INDEX_FILE: index };
    proc = Bun.spawn(["git", ...OVERRIDES, ...pre, ...args], { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (error) {
    throw new GitError(`git: could not start (${(error as Error).message})`, args, null, "");
  }
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).bytes(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** Run git at `where`; its stdout as text, or a GitError. */
export async function git(where: GitPlace, args: string[], index?: string): Promise<string> {
  const run = await gitRaw(where, args, index);
  if (run.code !== 0) throw failed(args, run);
  return new TextDecoder().decode(run.stdout);
}

function failed(args: string[], run: GitRun): GitError {
  const tail = clean(
    run.stderr
      .split("\n")
      .filter((l) => l.trim())
      .slice(-2)
      .join(" | "),
    300,
  );
  return new GitError(`git ${args.join(" ")}: exit ${run.code}${tail ? `: ${tail}` : ""}`, args, run.code, run.stderr);
}

/**
 * Whether git could find a repository from `cwd`: a `.git`, or a git folder's
 * HEAD, in it or above it (gitEnv drops GIT_DIR and GIT_WORK_TREE, so nothing
 * else can place one). Spares a run outside any repository two git processes.
 */
function mayBeInRepository(cwd: string): boolean {
  let dir: string;
  try {
    dir = realpathSync(cwd);
  } catch {
    return true;
  }
  for (;;) {
    if (existsSync(join(dir, ".git")) || existsSync(join(dir, "HEAD"))) return true;
    const up = dirname(dir);
    if (up === dir) return false;
    dir = up;
  }
}

/** The top of the work tree `cwd` is in, or null when it is in none (or git is missing). */
export async function workTreeTop(cwd: string): Promise<string | null> {
  if (!mayBeInRepository(cwd)) return null;
  try {
    const inside = await gitRaw(cwd, ["rev-parse", "--is-inside-work-tree"]);
    if (inside.code !== 0 || new TextDecoder().decode(inside.stdout).trim() !== "true") return null;
    const top = (await git(cwd, ["rev-parse", "--show-toplevel"])).trim();
    return top || null;
  } catch {
    return null;
  }
}

/** Where HEAD is: its commit (null before the first commit) and the branch it names (null when detached). */
export interface Head {
  commit: string | null;
  ref: string | null;
}

export async function head(top: GitPlace): Promise<Head> {
  const commit = await gitRaw(top, ["rev-parse", "--verify", "-q", "HEAD^{commit}"]);
  const ref = await gitRaw(top, ["symbolic-ref", "-q", "HEAD"]);
  const text = (r: GitRun) => new TextDecoder().decode(r.stdout).trim() || null;
  return { commit: commit.code === 0 ? text(commit) : null, ref: ref.code === 0 ? text(ref) : null };
}

export interface StatusEntry {
  /** The two status letters, `??` for untracked. */
  code: string;
  /** Relative to the top, `/`-separated. */
  path: string;
}

/** `git status --porcelain -z`, every untracked file listed on its own (no ignored ones); `config`: more `-c` overrides. */
export async function status(top: GitPlace, config: string[] = []): Promise<StatusEntry[]> {
  const out = await git(top, [...config, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none"]);
  const fields = out.split("\0");
  const entries: StatusEntry[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i] ?? "";
    if (field.length < 4) continue;
    const code = field.slice(0, 2);
    entries.push({ code, path: field.slice(3) });
    // A rename or copy is followed by its source path.
    if (code[0] === "R" || code[0] === "C") i++;
  }
  return entries;
}

const under = (path: string, folder: string | null): boolean => folder !== null && (path === folder || path.startsWith(`${folder}/`));

/** What makes the tree dirty, as `XY path` lines: everything but untracked files under `specFolder` (top-relative). */
export async function dirtyPaths(top: GitPlace, specFolder: string | null): Promise<string[]> {
  return (await status(top)).filter((e) => !(e.code === "??" && under(e.path, specFolder))).map((e) => `${e.code} ${e.path}`);
}

const excluding = (specFolder: string | null): string[] => (specFolder === null ? ["--", "."] : ["--", ".", `:(exclude)${specFolder}`]);

/**
 * An arm's patch: every change in the tree but the spec folder and `keepOut`
 * (paths that must never travel in a patch, even when an arm un-ignores
 * them), against `base` (`git add -A`, `git diff --cached --binary`), then
 * the index put back (`git reset`). Written to `target`; returns its size in
 * bytes (0: the arm changed nothing).
 */
export async function harvestPatch(
  top: GitPlace,
  specFolder: string | null,
  base: string,
  target: string,
  keepOut: string[] = [],
): Promise<number> {
  let patch: Uint8Array;
  try {
    await git(top, ["add", "-A", ...excluding(specFolder)]);
    // Named in a pathspec, an ignored path makes `git add` fail: taken out of the index instead.
    if (keepOut.length > 0)
      await git(top, ["rm", "-r", "-q", "--cached", "--ignore-unmatch", "--", ...keepOut.map((p) => `:(literal)${p}`)]);
    const run = await gitRaw(top, [
      "diff",
      "--cached",
      "--binary",
      "--no-color",
      "--no-ext-diff",
      "--no-textconv",
      "--src-prefix=a/",
      "--dst-prefix=b/",
      base,
    ]);
    if (run.code !== 0) throw failed(["diff", "--cached", "--binary", base], run);
    patch = run.stdout;
  } finally {
    await git(top, ["reset", "-q"]);
  }
  writeFileSync(target, patch, { mode: 0o600 });
  return patch.byteLength;
}

/**
 * The tree back to `found`: HEAD on the same branch and commit (an arm that
 * committed or switched branches is undone), tracked files restored
 * (`git checkout -- .`), new files and folders removed (`git clean -fd`), the
 * spec folder kept; with `ignoredToo`, ignored files go as well (`-x`).
 * Returns what had to be put back beyond the files ("HEAD moved", …), for the
 * arm's reason.
 */
export async function resetTree(top: GitPlace, specFolder: string | null, found: Head, ignoredToo = false): Promise<string[]> {
  const notes: string[] = [];
  const now = await head(top);
  if (found.ref !== null && now.ref !== found.ref) {
    await git(top, ["checkout", "-q", "-f", found.ref.replace(/^refs\/heads\//, "")]);
    notes.push(`the arm left HEAD on ${now.ref ?? "a detached commit"}: put back on ${found.ref}`);
  } else if (found.ref === null && now.ref !== null && found.commit !== null) {
    await git(top, ["checkout", "-q", "-f", "--detach", found.commit]);
    notes.push("the arm checked out a branch: HEAD detached again");
  }
  const after = await head(top);
  if (found.commit !== null && after.commit !== found.commit) {
    // The branch (or the detached HEAD) goes back to where it was; the arm's commits stay in the reflog.
    await git(top, ["reset", "-q", found.commit]);
    notes.push(`the arm moved HEAD to ${after.commit?.slice(0, 12) ?? "?"}: reset to ${found.commit.slice(0, 12)}`);
  }
  const checkout = await gitRaw(top, ["checkout", "-q", "--", "."]);
  // A tree with no tracked file has nothing to restore.
  if (checkout.code !== 0 && !/did not match any file/.test(checkout.stderr)) throw failed(["checkout", "--", "."], checkout);
  await git(top, ["clean", "-q", "-f", "-d", ...(ignoredToo ? ["-x"] : []), ...excluding(specFolder)]);
  return notes;
}

/** Apply a patch to the user's checkout, to the index too (`git apply --index`). */
export async function applyPatch(top: string, patch: string): Promise<void> {
  await git(top, ["apply", "--index", patch]);
}
