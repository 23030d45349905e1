// The capability probe: run the installed pi once (--version, --help), learn
// its dialect, and cache that in the ledger keyed by the binary's path, size
// and mtime, so a new pi is probed again and an old one never twice.
import { realpathSync, statSync } from "node:fs";
import { parseCapabilities, type PiCapabilities } from "../core/pi/capabilities.ts";
import type { Ledger } from "../io/ledger.ts";

const PROBE_TIMEOUT_MS = 30_000;

async function capture(argv: string[], env: Record<string, string | undefined>): Promise<string> {
  const proc = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env, timeout: PROBE_TIMEOUT_MS, killSignal: "SIGKILL" });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  await proc.exited;
  return `${out}\n${err}`;
}

export async function probePi(bin: string, ledger: Ledger, env: Record<string, string | undefined>): Promise<PiCapabilities> {
  const path = realpathSync(bin);
  const stat = statSync(path);
  const cached = await ledger.getProbe(path, stat.size, Math.round(stat.mtimeMs));
  const data = cached?.data;
  if (data !== null && typeof data === "object" && "version" in data) return data as PiCapabilities;
  const [version, help] = await Promise.all([capture([bin, "--version"], env), capture([bin, "--help"], env)]);
  const caps = parseCapabilities(version, help);
  if (!caps.version) throw new Error(`${bin} --version printed no version: is it pi?`);
  await ledger.putProbe(path, stat.size, Math.round(stat.mtimeMs), caps);
  return caps;
}
