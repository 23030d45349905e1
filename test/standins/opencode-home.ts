// One warm opencode home per opencode binary, kept under the OS temp folder and copied into
// each world (./opencode-warm.ts builds it, in a folder of its own renamed into place, so a
// test process never sees half of one). Each world gets its own copy of every file opencode
// writes (the database, the config folder); only the installed plugin package is hard-linked,
// read-only. AGENTPORT_OPENCODE_COLD=1 starts every world from an empty home instead.
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, realpathSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { peer } from "../peers/peers.ts";

/** Bumped when what the warm-up does changes, so an older template is not reused. */
const WARM_RECIPE = 1;
const PACKAGES = join("config", "opencode", "node_modules");

let template: string | null | undefined;

/** The warm home's folder, built on first use; null without opencode (or with AGENTPORT_OPENCODE_COLD=1). */
function warmHome(): string | null {
  if (template !== undefined) return template;
  const bin = peer("opencode").bin;
  if (bin === null || process.env.AGENTPORT_OPENCODE_COLD === "1") return (template = null);
  const real = realpathSync(bin);
  const { size, mtimeMs } = statSync(real);
  const key = createHash("sha256").update(`${WARM_RECIPE}\0${real}\0${size}\0${mtimeMs}`).digest("hex").slice(0, 16);
  const path = join(tmpdir(), `agentport-opencode-home-${key}`);
  if (!existsSync(path)) build(bin, path);
  return (template = path);
}

/**
 * Build the warm home at `path`, one test process at a time (the other waits for it, so two
 * workers do not both pay for it); a lock older than the build can take is someone's crash.
 */
function build(bin: string, path: string): void {
  const lock = `${path}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (existsSync(path)) return;
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - since > 180_000) rmSync(lock, { recursive: true, force: true });
      Bun.sleepSync(200);
    }
  }
  try {
    if (existsSync(path)) return;
    const built = Bun.spawnSync([process.execPath, join(import.meta.dir, "opencode-warm.ts"), bin, path], {
      stdout: "pipe",
      stderr: "pipe",
    });
    if (!existsSync(path)) throw new Error(`the warm opencode home was not built (exit ${built.exitCode}): ${built.stderr}`);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/** Fill `root` (a world's opencode home, not yet made) from the warm home, when there is one. */
export function copyWarmHome(root: string): void {
  const from = warmHome();
  if (from === null || existsSync(root)) return;
  const packages = join(from, PACKAGES);
  cpSync(from, root, { recursive: true, filter: (src) => src !== packages });
  if (!existsSync(packages)) return;
  mkdirSync(join(root, "config", "opencode"), { recursive: true });
  const linked = Bun.spawnSync(["cp", "-al", packages, join(root, PACKAGES)], { stderr: "pipe" });
  if (linked.exitCode !== 0) cpSync(packages, join(root, PACKAGES), { recursive: true });
}
