// Finding and reading agentport.json: `--config FILE`, else $AGENTPORT_CONFIG,
// else the nearest agentport.json from the working folder up to the
// repository root (the first folder holding .git), or in the working folder
// alone when it is in no repository: never above. A file found that way is
// the folder's, not the user's: it applies only once trusted (trust.ts).
import { existsSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { CONFIG_FILE, ConfigSchema, issueLine, type Config } from "./schema.ts";
import { changedFile, configTrust, namedFiles, sha256, type TrustRecords, type TrustState } from "./trust.ts";
import { fileDigest } from "../io/trust-store.ts";
import { MAX_WRITTEN_FILE_BYTES, NamedFileError, readNamedFile } from "../io/named-file.ts";

/** A config problem: one line naming the file and the field. The CLI makes it exit 2. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

export type ConfigOrigin = "flag" | "environment" | "found";

export interface LoadedConfig {
  /** Absolute path of the file. */
  path: string;
  /** How the file was chosen: --config, $AGENTPORT_CONFIG, or found from the working folder. */
  origin: ConfigOrigin;
  config: Config;
  sha256: string;
  /** explicit (chosen by the user) or trusted (found, and trusted with `agentport trust`). */
  trust: TrustState;
}

/** A config found from the working folder that is not used: never trusted, or changed since. */
export interface IgnoredConfig {
  path: string;
  sha256: string;
  trust: "untrusted" | "changed";
  /** The file the config names that changed since it was trusted (null: the config itself, or never trusted). */
  file: string | null;
}

const isFile = (path: string): boolean => existsSync(path) && statSync(path).isFile();

/** The config file to use, or null when there is none. */
export function findConfig(
  start: string,
  flag?: string,
  env: Record<string, string | undefined> = process.env,
): { path: string; origin: ConfigOrigin } | null {
  if (flag !== undefined && flag !== "") {
    const path = resolve(flag);
    if (!isFile(path)) throw new ConfigError(`--config ${flag}: no such file`);
    return { path, origin: "flag" };
  }
  const fromEnv = env.AGENTPORT_CONFIG;
  if (fromEnv) {
    const path = resolve(fromEnv);
    if (!isFile(path)) throw new ConfigError(`AGENTPORT_CONFIG=${fromEnv}: no such file`);
    return { path, origin: "environment" };
  }
  const root = repositoryRoot(start) ?? resolve(start);
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    const path = join(dir, CONFIG_FILE);
    if (isFile(path)) return { path, origin: "found" };
    if (dir === root || dirname(dir) === dir) return null;
  }
}

/** The nearest folder at or above `start` holding .git, or null outside any repository. */
export function repositoryRoot(start: string): string | null {
  for (let dir = resolve(start); ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) return dir;
    if (dirname(dir) === dir) return null;
  }
}

/** Parse and validate a config text; `file` names it in errors. */
export function parseConfig(text: string, file: string): Config {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${file}: not JSON (${(error as Error).message.split("\n")[0]})`);
  }
  const parsed = ConfigSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ConfigError(`${file}: ${issue ? issueLine(issue, raw) : "invalid"}`);
  }
  return parsed.data;
}

function readText(path: string): string {
  try {
    return readNamedFile(path, MAX_WRITTEN_FILE_BYTES);
  } catch (error) {
    throw new ConfigError(error instanceof NamedFileError ? error.message : `${path}: cannot read (${(error as Error).message})`);
  }
}

/** A config file the user chose, read and validated (no trust needed). */
export function loadConfig(path: string, origin: ConfigOrigin = "flag"): LoadedConfig {
  const text = readText(path);
  return { path, origin, config: parseConfig(text, path), sha256: sha256(text), trust: "explicit" };
}

/**
 * The config for a working folder: --config, $AGENTPORT_CONFIG, or found and
 * trusted. A found file that is not trusted is not even parsed: it is ignored,
 * as is a trusted one whose named files (namedFiles) changed since.
 */
export function lookupConfig(
  cwd: string,
  flag: string | undefined,
  records: TrustRecords | null,
  env: Record<string, string | undefined> = process.env,
): { loaded: LoadedConfig | null; ignored: IgnoredConfig | null } {
  const found = findConfig(cwd, flag, env);
  if (found === null) return { loaded: null, ignored: null };
  const text = readText(found.path);
  const hash = sha256(text);
  if (found.origin !== "found")
    return {
      loaded: { path: found.path, origin: found.origin, config: parseConfig(text, found.path), sha256: hash, trust: "explicit" },
      ignored: null,
    };
  const record = records?.trusted(found.path) ?? null;
  const state = configTrust(hash, record);
  if (state !== null || record === null)
    return { loaded: null, ignored: { path: found.path, sha256: hash, trust: state ?? "untrusted", file: null } };
  // The bytes are the ones trusted: parsing them is safe; then every file they name must be unchanged too.
  const config = parseConfig(text, found.path);
  const file = changedFile(namedFiles(config, found.path), record, fileDigest);
  if (file !== null) return { loaded: null, ignored: { path: found.path, sha256: hash, trust: "changed", file } };
  return { loaded: { path: found.path, origin: found.origin, config, sha256: hash, trust: "trusted" }, ignored: null };
}

/** A path written in the config, made absolute against the config file's folder. */
export function configPath(loaded: LoadedConfig, path: string): string {
  return isAbsolute(path) ? path : resolve(dirname(loaded.path), path);
}
