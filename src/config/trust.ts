// Trusting a project config, as direnv (`allow`) and mise (`trust`) do: an
// agentport.json found by the upward search is the folder's, not the user's;
// it can grant tools, pick models and name gates that `bon` runs with `sh -c`.
// It applies only once `agentport trust [FILE]` recorded its path and sha256,
// and the sha256 of every file it pulls in (env files, schemas, system-prompt
// files), and only while all of them still have those. Records live in the
// home (io/trust-store.ts). A file the user named (--config FILE,
// $AGENTPORT_CONFIG) is trusted as it is.
import { createHash } from "node:crypto";
import { dirname, isAbsolute, resolve } from "node:path";
import type { Config } from "./schema.ts";

/** explicit: named by --config or $AGENTPORT_CONFIG; trusted: found and recorded; untrusted: never recorded; changed: it or a file it names differs from the record. */
export type TrustState = "explicit" | "trusted" | "untrusted" | "changed";

/** What `agentport trust` recorded for a config: its sha256, and each file it names by absolute path (null: there was none). */
export interface TrustRecord {
  sha256: string;
  files: Record<string, string | null>;
}

/** Where trust is recorded (the home): the record for a path, or null. */
export interface TrustRecords {
  trusted(path: string): TrustRecord | null;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Every file a config pulls in, absolute: its env files, its agents' schema files and @FILE system prompts. */
export function namedFiles(config: Config, configFile: string): string[] {
  const at = (path: string) => (isAbsolute(path) ? path : resolve(dirname(configFile), path));
  const envFiles = config.env_file === undefined ? [] : Array.isArray(config.env_file) ? config.env_file : [config.env_file];
  const files = envFiles.map(at);
  for (const agent of Object.values(config.agents)) {
    if (typeof agent.schema === "string") files.push(at(agent.schema));
    const prompts =
      agent.append_system_prompt === undefined
        ? []
        : Array.isArray(agent.append_system_prompt)
          ? agent.append_system_prompt
          : [agent.append_system_prompt];
    for (const prompt of prompts) if (prompt.startsWith("@")) files.push(at(prompt.slice(1)));
  }
  return [...new Set(files)];
}

/** The config's own bytes against the record: untrusted, changed, or null when they match (then its files are checked: changedFile). */
export function configTrust(hash: string, record: TrustRecord | null): "untrusted" | "changed" | null {
  if (record === null) return "untrusted";
  return record.sha256 === hash ? null : "changed";
}

/** The first file the config names whose sha256 differs from the record, or null. */
export function changedFile(files: readonly string[], record: TrustRecord, digest: (path: string) => string | null): string | null {
  return files.find((file) => !Object.hasOwn(record.files, file) || record.files[file] !== digest(file)) ?? null;
}

/** The one line that says why a found config is not used. */
export function ignoredLine(path: string, state: "untrusted" | "changed", file: string | null = null): string {
  if (state === "untrusted") return `ignoring untrusted agentport.json at ${path}: run \`agentport trust\` to use it`;
  return file === null
    ? `ignoring ${path}: it changed since it was trusted; run \`agentport trust\` to use it`
    : `ignoring ${path}: ${file}, which it names, changed since it was trusted; run \`agentport trust\` to use it`;
}
