// Reading the env files the user chose (`--env-file FILE`, a trusted config's
// `env_file`): never a .env found in the agent's folder. Every value read
// joins the redactor; which keys are taken is core/env.ts's decision.
import { MAX_WRITTEN_FILE_BYTES, NamedFileError, readNamedFile } from "./named-file.ts";
import { resolve } from "node:path";
import { parseDotenv, type EnvFileValues } from "../core/env.ts";
import { secrets } from "../core/redact.ts";

/** Why an env file could not be read: one line naming it. */
export class EnvFileError extends Error {
  override readonly name = "EnvFileError";
}

/** Each file's variables, in order, named as given. */
export function readEnvFiles(paths: readonly string[]): EnvFileValues[] {
  const files: EnvFileValues[] = [];
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
    files.push({ path: given, values: parsed });
  }
  return files;
}
