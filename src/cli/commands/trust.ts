// `agentport trust [FILE]`: record that a project config may be used, as
// direnv allow and mise trust do: its absolute path, the sha256 of its bytes
// and of every file it names go into the home's trust file (never a ledger);
// a change to any of them needs trust again.
import { defineCommand } from "citty";
import { existsSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { findConfig, parseConfig } from "../../config/load.ts";
import { CONFIG_FILE } from "../../config/schema.ts";
import { namedFiles, sha256 } from "../../config/trust.ts";
import type { Config } from "../../config/schema.ts";
import { fileDigest, recordTrust } from "../../io/trust-store.ts";
import { stateHome } from "../../io/paths.ts";
import { configError, folder } from "../agent-options.ts";
import { verbosityArgs } from "../common.ts";
import { environmentError, usageError } from "../errors.ts";
import { log, setVerbosity, writeResult } from "../output.ts";
import { safeJson } from "../../core/text.ts";
import { HOME_ARG } from "../ledger-option.ts";
import { MAX_WRITTEN_FILE_BYTES, NamedFileError, readNamedFile } from "../../io/named-file.ts";

/** The file to trust: FILE, else the agentport.json the upward search finds from --cwd. */
function target(file: string | undefined, cwd: string): string {
  if (file !== undefined && file !== "") {
    const path = resolve(file);
    if (!existsSync(path) || !statSync(path).isFile()) throw usageError(`${file}: no such file`);
    return realpathSync(path);
  }
  const found = findConfig(cwd, undefined, {});
  if (found === null) throw usageError(`no ${CONFIG_FILE} from ${cwd} up to the repository root: give the file (agentport trust FILE)`);
  return found.path;
}

export const trustCommand = defineCommand({
  meta: {
    name: "trust",
    description: `Trust a project config (default: the ${CONFIG_FILE} found from here up to the repository root): a found config applies only once trusted, and again after each change`,
  },
  args: {
    file: { type: "positional", required: false, description: `The config file (default: the nearest ${CONFIG_FILE})` },
    cwd: { type: "string", description: "Where to look for it (default: the current folder)" },
    json: { type: "boolean", description: "Print {path, sha256} as one JSON object" },
    home: HOME_ARG,
    ...verbosityArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const path = target(typeof args.file === "string" ? args.file : undefined, folder(args.cwd));
    let text: string;
    try {
      text = readNamedFile(path, MAX_WRITTEN_FILE_BYTES);
    } catch (error) {
      throw usageError(
        error instanceof NamedFileError
          ? error.message
          : `${path}: cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      );
    }
    // Only a valid config is worth trusting: the error names the field now, not at the next run.
    let config: Config;
    try {
      config = parseConfig(text, path);
    } catch (error) {
      configError(error);
    }
    const hash = sha256(text);
    const files = Object.fromEntries(namedFiles(config, path).map((file) => [file, fileDigest(file)]));
    const home = stateHome(args.home);
    try {
      recordTrust(home, path, { sha256: hash, files });
    } catch (error) {
      throw environmentError(`${home}: cannot record the trust (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    if (args.json) await writeResult(safeJson({ path, sha256: hash, files }));
    else
      log.info(
        `trusted ${path} (sha256 ${hash.slice(0, 12)}…)${Object.keys(files).length > 0 ? ` and the ${Object.keys(files).length} file(s) it names` : ""}: agentport uses it until one of them changes`,
      );
    return 0;
  },
});
