// --permissions FILE: the policy file read (a regular file, bounded) and
// checked with zod; a bad one is one line naming the file and the field (exit 2).
import { MAX_WRITTEN_FILE_BYTES, readNamedFile } from "../io/named-file.ts";
import type { z } from "zod";
import { POLICY_KINDS, PolicySchema, type PermissionPolicy } from "../core/permissions.ts";
import { fieldPath, issueLine } from "../config/schema.ts";
import { repeatedKey } from "../core/json-keys.ts";
import { usageError } from "./errors.ts";
import { userJson } from "./user-file.ts";

export function readPolicy(path: string, label: string): PermissionPolicy {
  // A file that cannot be read is the named-file error: one line, exit 2.
  const text = readNamedFile(path, MAX_WRITTEN_FILE_BYTES, `${label} ${path}`);
  // Read as UTF-8, an invalid byte is U+FFFD: a rule would silently say something else.
  if (text.includes("\uFFFD")) throw usageError(`${label} ${path}: not UTF-8 (or holds U+FFFD); save it as UTF-8`);
  const raw = userJson(text, `${label} ${path}`);
  const repeated = repeatedKey(text);
  if (repeated !== null)
    throw usageError(
      `${label} ${path}: ${JSON.stringify(repeated).slice(0, 80)} twice in one object; JSON would keep the last, say it once`,
    );
  const parsed = PolicySchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw usageError(
      `${label} ${path}: ${issue ? policyIssue(issue, raw) : "invalid"} (a policy is {"rules": [{"decision": "allow", "kind": "edit", "path": "src/**"}, …]})`,
    );
  }
  return { source: path, rules: parsed.data.rules };
}

/** One issue in the policy's words: its keys and kinds named (the config's formatter knows only the config's). */
function policyIssue(issue: z.core.$ZodIssue, raw: unknown): string {
  if (issue.code === "unrecognized_keys") {
    return `${issue.keys.map((k) => fieldPath([...issue.path, k])).join(", ")}: unknown key (known: ${issue.path.length === 0 ? "rules" : "decision, kind, path, title"})`;
  }
  if (issue.path.includes("kind")) return `${fieldPath(issue.path)}: expected one of ${POLICY_KINDS.join(", ")}, or a list of them`;
  return issueLine(issue, raw);
}
