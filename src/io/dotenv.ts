// Reading the env files the user chose (`--env-file FILE`, a trusted config's
// `env_file`): never a .env found in the agent's folder. Every value read
// joins the redactor; names an env file may not set are reported, not taken.
import { MAX_WRITTEN_FILE_BYTES, NamedFileError, readNamedFile } from "./named-file.ts";
import { resolve } from "node:path";
import { deniedFromEnvFile, parseDotenv } from "../core/env.ts";
import { secrets } from "../core/redact.ts";

export interface EnvFile {
  path: string;
  /** The keys taken from it (never their values). */
  taken: string[];
  /** The keys it tried to set that only the real environment may set. */
  denied: string[];
}

/** Why an env file could not be read: one line naming it. */
export class EnvFileError extends Error {
  override readonly name = "EnvFileError";
}

/** The files' variables, later files over earlier ones, without the denied names. */
export function readEnvFiles(paths: readonly string[]): { values: Record<string, string>; files: EnvFile[] } {
  const values: Record<string, string> = {};
  const files: EnvFile[] = [];
  for (const given of paths) {
    const path = resolve(given);
    let text: string;
    try {
      text = readNamedFile(path, MAX_WRITTEN_FILE_BYTES, `--env-file ${given}`);
    } catch (error) {
      if (error instanceof NamedFileError) throw new EnvFileError(error.message);
      throw error;
    }
    const parsed = parseDotenv(text);
    secrets.addValues(Object.values(parsed));
    const file: EnvFile = { path, taken: [], denied: [] };
    for (const [key, value] of Object.entries(parsed)) {
      if (deniedFromEnvFile(key)) file.denied.push(key);
      else {
        values[key] = value;
        file.taken.push(key);
      }
    }
    files.push(file);
  }
  return { values, files };
}
