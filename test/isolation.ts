// Whether real bwrap can isolate a run on this box: the suites that need it
// skip (said clearly) where it cannot, which $AGENTPORT_REQUIRE_BWRAP (CI)
// turns into a failure.
export const BWRAP_REQUIRED = Boolean(process.env.AGENTPORT_REQUIRE_BWRAP);

let works: boolean | undefined;

export function bwrapWorks(): boolean {
  if (works !== undefined) return works;
  const trial = Bun.spawnSync(["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "true"], {
    stdout: "ignore",
    stderr: "pipe",
  });
  works = trial.exitCode === 0;
  if (!works) {
    const why = `bwrap cannot isolate here (${trial.stderr.toString().trim() || "not installed"}): apt-get install -y bubblewrap, and allow unprivileged user namespaces`;
    if (BWRAP_REQUIRED) throw new Error(`bwrap is required ($AGENTPORT_REQUIRE_BWRAP) but ${why}`);
    console.warn(`SKIPPING the isolation tests: ${why}`);
  }
  return works;
}
