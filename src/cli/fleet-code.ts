// Where a submitted task's code comes from: a git URL the workers clone
// (--repo, --ref), a git bundle stored with the task (--bundle FILE), or the
// current repository's HEAD bundled here (--here). Exactly one.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { usageError } from "./errors.ts";

/** The largest bundle a task stores (it lives in a PostgreSQL row). */
export const BUNDLE_MAX_BYTES = 64 * 1024 * 1024;
const BUNDLE_HEADERS = ["# v2 git bundle\n", "# v3 git bundle\n"];

export interface Code {
  /** The URL, or what the bundle is (for people: `bundle:FILE`, `here:FOLDER@COMMIT`). */
  repo: string;
  ref: string | null;
  bundle: Uint8Array | null;
}

function git(args: string[], cwd: string): string | null {
  const done = Bun.spawnSync(["git", ...args], { cwd, stdout: "pipe", stderr: "ignore" });
  return done.exitCode === 0 ? done.stdout.toString().trim() : null;
}

function bounded(bytes: Uint8Array, what: string): Uint8Array {
  if (bytes.length > BUNDLE_MAX_BYTES)
    throw usageError(
      `${what} is ${bytes.length} bytes, over the ${BUNDLE_MAX_BYTES / 1024 / 1024} MiB a task stores: push it and give --repo URL instead`,
    );
  return bytes;
}

function readBundle(file: string): Uint8Array {
  let bytes: Uint8Array;
  try {
    if (statSync(file).size > BUNDLE_MAX_BYTES) return bounded(new Uint8Array(statSync(file).size), `--bundle ${file}`);
    bytes = readFileSync(file);
  } catch (error) {
    throw usageError(`--bundle ${file}: cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const head = new TextDecoder().decode(bytes.subarray(0, 16));
  if (!BUNDLE_HEADERS.includes(head)) throw usageError(`--bundle ${file} is not a git bundle (git bundle create FILE REF makes one)`);
  return bounded(bytes, `--bundle ${file}`);
}

/** HEAD of the repository `cwd` is in, as a bundle. */
function bundleHere(cwd: string): Code {
  const top = git(["rev-parse", "--show-toplevel"], cwd);
  const commit = top === null ? null : git(["rev-parse", "--verify", "-q", "HEAD"], top);
  if (top === null || commit === null)
    throw usageError(
      "--here: this folder is not in a git repository with a commit (commit first: --here ships HEAD, not uncommitted changes)",
    );
  const dir = mkdtempSync(join(tmpdir(), "agentport-here-"));
  try {
    const file = join(dir, "here.bundle");
    if (git(["bundle", "create", "--quiet", file, "HEAD"], top) === null) throw usageError(`--here: git bundle create failed in ${top}`);
    return { repo: `here:${top}@${commit}`, ref: null, bundle: bounded(readFileSync(file), `--here (${top})`) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The code of `submit`'s flags: exactly one of --repo, --bundle, --here (--ref with the first two). */
export function codeOf(args: { repo?: unknown; ref?: unknown; bundle?: unknown; here?: unknown }, cwd: string): Code {
  const given = [
    typeof args.repo === "string" && "--repo",
    typeof args.bundle === "string" && "--bundle",
    args.here === true && "--here",
  ].filter(Boolean);
  if (given.length !== 1)
    throw usageError(
      given.length === 0
        ? "no code: give --repo URL (a git URL the workers can clone), --bundle FILE (a git bundle) or --here (this repository's HEAD)"
        : `give only one of ${given.join(", ")}`,
    );
  const ref = typeof args.ref === "string" && args.ref !== "" ? args.ref : null;
  if (args.here === true) {
    if (ref !== null) throw usageError("--here ships HEAD: give no --ref (check the ref out first)");
    return bundleHere(cwd);
  }
  if (typeof args.bundle === "string") return { repo: `bundle:${args.bundle}`, ref, bundle: readBundle(args.bundle) };
  if (args.repo === "") throw usageError("--repo needs a URL");
  return { repo: args.repo as string, ref, bundle: null };
}
