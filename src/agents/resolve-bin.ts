// Finding an agent's binary: a flag, else an environment variable, else PATH.
import { accessSync, constants, statSync } from "node:fs";
import { resolve } from "node:path";

export type BinLookup = { ok: true; path: string } | { ok: false; reason: string };

export function resolveBin(name: string, flag: string | undefined, envVar: string, env = process.env): BinLookup {
  const given = flag || env[envVar];
  // The config layer folds the environment into the flag's value: name the variable when it is its value.
  const source = flag && flag !== env[envVar] ? `--${name}-bin` : envVar;
  if (given) {
    const path = given.includes("/") ? resolve(given) : Bun.which(given);
    if (path === null) return { ok: false, reason: `${name}: "${given}" (from ${source}) is not on PATH` };
    try {
      if (!statSync(path).isFile()) return { ok: false, reason: `${name}: ${path} is not a file` };
      accessSync(path, constants.X_OK);
    } catch {
      return { ok: false, reason: `${name}: ${path} does not exist or is not executable (from ${source})` };
    }
    return { ok: true, path };
  }
  const found = Bun.which(name);
  if (found === null) {
    return { ok: false, reason: `${name}: not found on PATH; install it or point ${envVar} (or --${name}-bin) at it` };
  }
  return { ok: true, path: found };
}
