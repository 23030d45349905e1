// Isolation: an agent run under bwrap (Debian's bubblewrap) with the root
// file system read-only, /dev and /proc of its own, a private /tmp, its
// folder and its own state folders writable, in a new PID namespace (every
// descendant ends with it, however it detached) and, with network none, a
// network namespace with no interface up; $TMPDIR is its /tmp, $IS_SANDBOX
// is 1. The sandbox belongs to the command (run, resume, bon): set once
// before its first agent starts, every agent process it spawns (spawn.ts) is
// wrapped, and bon's gates (they run the arm's code); the probes and bon's
// setup are not.
import { AsyncLocalStorage } from "node:async_hooks";
import { existsSync, mkdirSync, realpathSync } from "node:fs";
import { dirname, isAbsolute } from "node:path";

export const NETWORKS = ["host", "none"] as const;
export type Network = (typeof NETWORKS)[number];

export interface Sandbox {
  network: Network;
  /** Folders (absolute) the agent may write besides its working folder: its state folders, its run folder. */
  writable: string[];
  /** Paths it must still read where the private /tmp would hide them (its binary, agentport's home). */
  readable: string[];
}

/** Why isolation cannot work here: a kind to switch on, one line, what to do. */
export type SandboxProbe = { ok: true } | { ok: false; kind: "platform" | "missing" | "refused"; reason: string; fix: string };

const BWRAP = "bwrap";

/** Whether bwrap can isolate a process on this box: present, and a trial run succeeds. */
export function probeSandbox(): SandboxProbe {
  if (process.platform !== "linux") {
    return {
      ok: false,
      kind: "platform",
      reason: `isolation needs Linux and bwrap; this is ${process.platform}`,
      fix: "run agentport on Linux (no macOS sandbox yet)",
    };
  }
  let trial: ReturnType<typeof Bun.spawnSync>;
  try {
    trial = Bun.spawnSync(
      [BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--die-with-parent", "true"],
      { stdin: "ignore", stdout: "ignore", stderr: "pipe" },
    );
  } catch {
    return {
      ok: false,
      kind: "missing",
      reason: "bwrap is not installed",
      fix: "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap)",
    };
  }
  if (trial.exitCode === 0) return { ok: true };
  const said = (trial.stderr?.toString() ?? "").trim().split("\n").pop() ?? "";
  return {
    ok: false,
    kind: "refused",
    reason: `bwrap cannot make a sandbox here (exit ${trial.exitCode}${said ? `: ${said}` : ""})`,
    fix: "enable unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 (Debian), or on Ubuntu 24.04+ lift the AppArmor restriction (sysctl kernel.apparmor_restrict_unprivileged_userns=0, or an AppArmor profile for bwrap)",
  };
}

let current: Sandbox | null = null;
// A worker's phases share its process: each has its own sandbox (ownSandbox).
const scoped = new AsyncLocalStorage<{ sandbox: Sandbox | null }>();

/** From now on, every agent this process (or this phase: ownSandbox) starts runs in `sandbox` (null: none). */
export function isolateAgents(sandbox: Sandbox | null): void {
  const scope = scoped.getStore();
  if (scope === undefined) current = sandbox;
  else scope.sandbox = sandbox;
}

export const agentSandbox = (): Sandbox | null => {
  const scope = scoped.getStore();
  return scope === undefined ? current : scope.sandbox;
};

/** Run `phase` with a sandbox of its own (none until it isolates): what it sets is not the process's. */
export function ownSandbox<T>(phase: () => T): T {
  return scoped.run({ sandbox: null }, phase);
}

/** The bwrap command line that runs `argv` in `sandbox`, in `cwd`, with `extra` folders writable too. */
export function sandboxArgv(sandbox: Sandbox, cwd: string, argv: string[], extra: string[] = []): string[] {
  const out = [BWRAP, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  // The private /tmp hides what lives there: what the agent must read is bound back read-only.
  // Paths are bound as they really are (bwrap cannot make a mount point through a symlink).
  const bin = argv[0] ?? "";
  // agentport itself too: the fake agents and many wrappers are its binary (a clone or a build under /tmp).
  const binaries = isAbsolute(bin) ? [bin, real(bin)] : [];
  const readable = [
    ...sandbox.readable,
    ...binaries.map((b) => dirname(b)),
    ...binaries.flatMap(packageRoot),
    dirname(real(process.execPath)),
  ];
  for (const path of unique(readable.filter(existsSync).map(real))) if (underTmp(path)) out.push("--ro-bind", path, path);
  const writable = [...sandbox.writable, ...extra, cwd];
  for (const path of writable) if (isAbsolute(path) && !existsSync(path)) mkdirSync(path, { recursive: true, mode: 0o700 });
  for (const path of unique(writable.map(real))) out.push("--bind", path, path);
  // Its temporary files go to its private /tmp, wherever $TMPDIR pointed (outside, read-only or hidden);
  // IS_SANDBOX=1 says it is in one (Claude Code then takes bypassPermissions even as root).
  out.push("--setenv", "TMPDIR", "/tmp", "--setenv", "IS_SANDBOX", "1", "--unshare-pid", "--die-with-parent", "--chdir", cwd);
  if (sandbox.network === "none") out.push("--unshare-net");
  return [...out, "--", ...argv];
}

/** The outermost node_modules folder holding `path`: an npm-installed agent (pi, codex, gemini) loads its packages from there. */
function packageRoot(path: string): string[] {
  const at = path.indexOf("/node_modules/");
  return at === -1 ? [] : [path.slice(0, at + "/node_modules".length)];
}

const underTmp = (path: string): boolean => path === "/tmp" || path.startsWith("/tmp/");

const unique = (paths: string[]): string[] => [...new Set(paths.filter((p) => isAbsolute(p)))];

function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
