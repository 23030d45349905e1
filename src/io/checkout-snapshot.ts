// The user's checkout, fingerprinted before and after a best-of-N batch, so
// that agentport says exactly what changed (an arm's tools may write anywhere
// the user can) and never says "unchanged" unless it is: every path git
// status lists (untracked ones too) with a hash of its bytes, the git
// folder's files that make git run commands or see another tree (config,
// hooks, info/*), the index's hash, HEAD and every ref. Its git calls are
// git.ts's (no fsmonitor, no hooks); the status also runs with every filter
// its config names emptied, so a clean filter an arm planted does not run.
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, type Stats } from "node:fs";
import { join } from "node:path";
import { git, status } from "./git.ts";

/** What each watched thing was: a fingerprint by name (`.git/config`, `status README.md`, `ref refs/heads/main`). */
export type CheckoutSnapshot = Map<string, string>;

// Files of a git folder that run commands or change what git sees.
const CONTROL = [
  "config",
  "config.worktree",
  "info/exclude",
  "info/attributes",
  "info/grafts",
  "objects/info/alternates",
  "commondir",
  "shallow",
  "index",
  "HEAD",
];
// Past this, a file's size and mtime stand for its bytes.
const HASH_LIMIT = 16 * 1024 * 1024;

function print(path: string): string {
  let st: Stats;
  try {
    st = lstatSync(path);
  } catch {
    return "absent";
  }
  if (st.isSymbolicLink()) return `link ${readlinkSync(path)}`;
  if (st.isDirectory()) return "dir";
  if (!st.isFile()) return `special ${st.mode}`;
  if (st.size > HASH_LIMIT) return `${st.mode} ${st.size} ${st.mtimeMs}`;
  return `${st.mode} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`;
}

/** Each file under `dir`, relative to it (hooks: a folder of scripts). */
function filesUnder(dir: string, rel = ""): string[] {
  if (!existsSync(join(dir, rel)) || !lstatSync(join(dir, rel)).isDirectory()) return [];
  return readdirSync(join(dir, rel)).flatMap((name) => {
    const path = rel === "" ? name : `${rel}/${name}`;
    return lstatSync(join(dir, path)).isDirectory() ? filesUnder(dir, path) : [path];
  });
}

/** The checkout's git folder and, when another (a linked worktree's), the common one: absolute. */
export async function gitDirs(top: string): Promise<string[]> {
  const [gitDir, common] = (await git(top, ["rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir"])).trim().split("\n");
  return [...new Set([gitDir ?? "", common ?? ""])].filter(Boolean);
}

/** The checkout at `top` now. */
export async function snapshotCheckout(top: string): Promise<CheckoutSnapshot> {
  const snap: CheckoutSnapshot = new Map();
  const dirs = await gitDirs(top);
  for (const dir of dirs) {
    const shown = dir === dirs[0] ? ".git" : dir;
    for (const name of CONTROL) snap.set(`${shown}/${name}`, print(join(dir, name)));
    for (const hook of filesUnder(join(dir, "hooks"))) snap.set(`${shown}/hooks/${hook}`, print(join(dir, "hooks", hook)));
  }
  for (const line of (await git(top, ["for-each-ref", "--format=%(objectname) %(refname)"])).split("\n")) {
    const space = line.indexOf(" ");
    if (space > 0) snap.set(`ref ${line.slice(space + 1)}`, line.slice(0, space));
  }
  for (const entry of await status(top, await filtersOff(top)))
    snap.set(`status ${entry.path}`, `${entry.code} ${print(join(top, entry.path))}`);
  return snap;
}

/** `-c filter.NAME.clean=` (smudge, process) for every filter the checkout's config names: git status would run a clean filter. */
async function filtersOff(top: string): Promise<string[]> {
  const names = (await git(top, ["config", "--name-only", "--list"])).split("\n");
  const filters = new Set(names.map((n) => /^filter\.(.+)\.[^.]+$/.exec(n)?.[1]).filter((n): n is string => n !== undefined));
  return [...filters].flatMap((f) => ["clean", "smudge", "process"].flatMap((k) => ["-c", `filter.${f}.${k}=`]));
}

/** What differs, one line each, sorted: `.git/config: changed`, `planted.txt: untracked (new)`, `ref refs/heads/x: added`. */
export function checkoutChanges(before: CheckoutSnapshot, after: CheckoutSnapshot): string[] {
  const lines: string[] = [];
  const label = (key: string, value: string) =>
    key.startsWith("status ") ? `${key.slice(7)}: ${value.startsWith("??") ? "untracked" : `git status ${value.slice(0, 2).trim()}`}` : key;
  for (const [key, now] of after) {
    const was = before.get(key);
    if (was === now) continue;
    if (key.startsWith("status ")) lines.push(`${label(key, now)} (${was === undefined ? "new" : "changed"})`);
    else lines.push(`${key}: ${was === undefined || was === "absent" ? "added" : now === "absent" ? "deleted" : "changed"}`);
  }
  for (const [key, was] of before) {
    if (after.has(key)) continue;
    lines.push(key.startsWith("status ") ? `${label(key, was)} (gone: back to the commit, or deleted)` : `${key}: deleted`);
  }
  return lines.sort();
}
