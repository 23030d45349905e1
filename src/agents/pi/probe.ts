// The capability probe: run the installed pi once (--version, --help), learn
// its dialect, and cache that in the ledger keyed by the binary's path, size
// and mtime, so a new pi is probed again and an old one never twice. One
// probe per binary at a time: a lock in the state folder; the others wait for
// the cached answer (16 cold runs at once on 2 cores probe once, not 16 times).
import { createHash } from "node:crypto";
import { realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { localStateOf } from "../../io/paths.ts";
import { parseCapabilities, type PiCapabilities } from "../../core/pi/capabilities.ts";
import type { Ledger } from "../../io/ledger.ts";
import { underLock } from "../../io/file-lock.ts";

const PROBE_TIMEOUT_MS = 30_000;
// A waiter gives the holder its own two probes' time and some.
const LOCK_WAIT_MS = 3 * PROBE_TIMEOUT_MS;

/** A probe command that did not answer in time: said as a timeout, not as a missing version. */
export class ProbeTimeout extends Error {
  override readonly name = "ProbeTimeout";
}

/** stdout and stderr of `argv`, killed (and said to be a timeout) after `timeoutMs`. */
export async function capture(argv: string[], env: Record<string, string | undefined>, timeoutMs = PROBE_TIMEOUT_MS): Promise<string> {
  const proc = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    proc.kill("SIGKILL");
  }, timeoutMs);
  try {
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    await proc.exited;
    if (timedOut)
      throw new ProbeTimeout(
        `\`${argv.join(" ")}\` did not answer within ${timeoutMs >= 1000 ? `${Math.round(timeoutMs / 1000)} s` : `${timeoutMs} ms`}: timeout (is the machine overloaded?)`,
      );
    return `${out}\n${err}`;
  } finally {
    clearTimeout(timer);
  }
}

/** The home's lock for probing the binary at `path`. */
function lockFile(ledger: Ledger, path: string): string {
  return join(localStateOf(ledger.path), "locks", `probe-${createHash("sha256").update(path).digest("hex").slice(0, 16)}.lock`);
}

/** The probe the ledger has cached for this pi, without running it; null when there is none. */
export async function cachedPi(bin: string, ledger: Ledger): Promise<PiCapabilities | null> {
  const path = realpathSync(bin);
  const stat = statSync(path);
  const data = (await ledger.getProbe(path, stat.size, Math.round(stat.mtimeMs)))?.data;
  return data !== null && typeof data === "object" && "version" in data ? (data as PiCapabilities) : null;
}

export async function probePi(bin: string, ledger: Ledger, env: Record<string, string | undefined>): Promise<PiCapabilities> {
  const path = realpathSync(bin);
  const stat = statSync(path);
  const mtime = Math.round(stat.mtimeMs);
  const cached = () => cachedPi(bin, ledger);
  const probe = async (): Promise<PiCapabilities> => {
    const [version, help] = await Promise.all([capture([bin, "--version"], env), capture([bin, "--help"], env)]);
    const caps = parseCapabilities(version, help);
    if (!caps.version) throw new Error(`${bin} --version printed no version: is it pi?`);
    await ledger.putProbe(path, stat.size, mtime, caps);
    return caps;
  };
  return (
    (await cached()) ??
    (await underLock(lockFile(ledger, path), probe, {
      ready: cached,
      waitMs: LOCK_WAIT_MS,
      what: `the probe of ${bin} by another agentport`,
    }))
  );
}
