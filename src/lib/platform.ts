// Which npm package carries this machine's agentport binary, and where it
// is: the launcher (bin/agentport.cjs) and the library's `run` both ask.
// Node-compatible, no dependency.
import { dirname, join } from "node:path";

/** The platform packages, by `<os>-<arch>[-musl]`: the names scripts/pack.ts publishes. */
export const PLATFORMS = ["linux-x64", "linux-arm64", "linux-x64-musl", "linux-arm64-musl", "darwin-arm64", "darwin-x64"] as const;
export type Platform = (typeof PLATFORMS)[number];

export const SCOPE = "@agentport";

/** Linux without glibc (Alpine): Node's report names no glibc runtime. */
function isMusl(): boolean {
  const report = (process as { report?: { getReport(): unknown } }).report?.getReport() as
    | { header?: { glibcVersionRuntime?: string } }
    | undefined;
  return report !== undefined && !report.header?.glibcVersionRuntime;
}

/** This machine's platform, or null when agentport ships no binary for it. */
export function currentPlatform(): Platform | null {
  const name = `${process.platform}-${process.arch}${process.platform === "linux" && isMusl() ? "-musl" : ""}`;
  return (PLATFORMS as readonly string[]).includes(name) ? (name as Platform) : null;
}

/** The binary's path in the installed platform package; a message that says what to do when there is none. */
export function binaryPath(resolve: (id: string) => string): { path: string } | { error: string } {
  const platform = currentPlatform();
  if (platform === null)
    return { error: `agentport ships no binary for ${process.platform}-${process.arch}; build it from source (bun run scripts/build.ts)` };
  const name = `${SCOPE}/${platform}`;
  try {
    return { path: join(dirname(resolve(`${name}/package.json`)), "bin", "agentport") };
  } catch {
    return {
      error: `the package ${name} is not installed: it carries the agentport binary for this machine; reinstall agentport without --no-optional (or --omit=optional)`,
    };
  }
}
