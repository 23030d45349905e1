// The capability probe of an agent CLI that answers `--version` and a help
// text without a model call (codex, gemini): zero tokens. The flags the help
// names are what argv may use; the result is cached in the ledger keyed by
// the binary's path, size and mtime, so a new binary is probed again and an
// old one never twice.
import { realpathSync, statSync } from "node:fs";
import type { Ledger } from "../io/ledger.ts";

export interface CliCapabilities {
  version: string;
  /** Each flag agentport may pass: whether the help text names it. */
  flags: Record<string, boolean>;
}

export interface CliProbeSpec {
  /** The argv after the binary that prints the help with the flags (codex: exec --help). */
  help: string[];
  /** The version in `--version`'s output, or "" when it is not this agent. */
  version: (output: string) => string;
  flags: readonly string[];
  env?: Record<string, string>;
}

const PROBE_TIMEOUT_MS = 30_000;

async function capture(argv: string[], env: Record<string, string | undefined>): Promise<string> {
  const proc = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env, timeout: PROBE_TIMEOUT_MS, killSignal: "SIGKILL" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  return `${out}\n${err}`;
}

/** The ledger's key for a probe of this binary: its path (and the help asked), size and mtime. */
function probeKey(bin: string, spec: CliProbeSpec): [string, number, number] {
  const path = realpathSync(bin);
  const stat = statSync(path);
  return [`${path}#${spec.help.join(" ")}`, stat.size, Math.round(stat.mtimeMs)];
}

/** The probe the ledger has cached for this binary, without running it; null when there is none. */
export async function cachedCli(bin: string, ledger: Ledger | null, spec: CliProbeSpec): Promise<CliCapabilities | null> {
  const cached = ledger === null ? null : (await ledger.getProbe(...probeKey(bin, spec)))?.data;
  return cached !== null && typeof cached === "object" && "version" in cached && "flags" in cached ? (cached as CliCapabilities) : null;
}

export async function probeCli(
  bin: string,
  ledger: Ledger | null,
  env: Record<string, string | undefined>,
  spec: CliProbeSpec,
): Promise<CliCapabilities> {
  const key = probeKey(bin, spec);
  const cached = await cachedCli(bin, ledger, spec);
  if (cached !== null) return cached;
  const runEnv = { ...env, ...spec.env };
  const [versionText, help] = await Promise.all([capture([bin, "--version"], runEnv), capture([bin, ...spec.help], runEnv)]);
  const version = spec.version(versionText);
  if (!version) throw new Error(`${bin} --version printed no version we know (${versionText.trim().split("\n")[0]?.slice(0, 80) ?? ""})`);
  const named = new Set(help.match(/--[a-z][a-z0-9-]*/g) ?? []);
  const caps: CliCapabilities = { version, flags: Object.fromEntries(spec.flags.map((f) => [f, named.has(f)])) };
  await ledger?.putProbe(...key, caps);
  return caps;
}

/** The flags the probe lacks: a run that needs them cannot be built. */
export function missingFlags(caps: CliCapabilities, needed: readonly string[]): string[] {
  return needed.filter((f) => !caps.flags[f]);
}

/** The first line `bin --version` prints (stdout, else stderr). */
export async function versionLine(bin: string, env: Record<string, string | undefined> = process.env): Promise<string> {
  return (await capture([bin, "--version"], env)).trim().split("\n")[0] ?? "";
}
