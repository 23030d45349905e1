// One permission policy for every agent that can express it (--permissions
// FILE): an allow-list of rules on the tool kind (ACP's kinds), the paths the
// call touches (globs relative to the session's folder) and its title, first
// match wins; a request no rule allows is rejected. Pure: the file is read and
// parsed at the boundary (src/cli/permissions-file.ts).
import type { z } from "zod";
import type { PermissionMode } from "./agents.ts";
import { globPattern } from "./glob.ts";
import { lazySchema } from "./lazy-schema.ts";

export const POLICY_KINDS = ["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"] as const;
export type PolicyKind = (typeof POLICY_KINDS)[number];
export const MAX_POLICY_RULES = 200;

export const PolicySchema = lazySchema((z) => {
  const oneOrMany = <T extends z.ZodType>(item: T) => z.union([item, z.array(item).min(1).max(64)]);
  const glob = z.string().min(1).max(1024);
  const inside = glob.refine((g) => !g.startsWith("/") && !g.split("/").includes(".."), {
    message:
      "a path glob is relative to the session's folder and stays in it: no leading / and no .. (a path outside matches no path rule)",
  });
  return z.strictObject({
    rules: z
      .array(
        z.strictObject({
          decision: z.enum(["allow", "reject"]),
          kind: oneOrMany(z.enum(POLICY_KINDS)).optional(),
          /** Every path the call touches must match one (relative to the session's folder; `*`, `**`, `?`). */
          path: oneOrMany(inside).optional(),
          /** A glob on the call's title (`*` any text). */
          title: glob.optional(),
        }),
      )
      .max(MAX_POLICY_RULES),
  });
});

export interface PolicyRule {
  decision: "allow" | "reject";
  kind?: PolicyKind | PolicyKind[];
  path?: string | string[];
  title?: string;
}

export interface PermissionPolicy {
  /** Where it came from, for the refused list's "how to allow". */
  source: string;
  rules: PolicyRule[];
}

/** What one request is, as the policy sees it: its kind, the paths it touches (relative; null: outside the folder), its title. */
export interface PolicyRequest {
  kind: string;
  paths: (string | null)[];
  title: string;
}

const list = <T>(value: T | T[] | undefined): T[] | undefined => (value === undefined ? undefined : Array.isArray(value) ? value : [value]);

/** A longer path is not placed (outside); a rule on the title rejects a longer title (bounds the matching's time). */
export const MAX_MATCHED_CHARS = 4096;

/** One request's glob tests, each (glob, text) matched once however many rules repeat it. */
function globTester(): (glob: string, text: string, slashes?: boolean) => boolean {
  const results = new Map<string, boolean>();
  return (glob, text, slashes = true) => {
    const key = `${slashes ? "p" : "t"}${glob}\0${text}`;
    let result = results.get(key);
    if (result === undefined) {
      result = globPattern(glob, slashes).test(text);
      results.set(key, result);
    }
    return result;
  };
}

/** Whether the rule matches; null: it would test a title too long to match, which rejects the request. */
function matches(rule: PolicyRule, request: PolicyRequest, glob: ReturnType<typeof globTester>): boolean | null {
  const kinds = list(rule.kind);
  if (kinds !== undefined && !kinds.includes(request.kind as PolicyKind)) return false;
  const paths = list(rule.path);
  if (paths !== undefined) {
    // A path rule says where: a call that names no path, or one outside the folder, is not inside it.
    if (request.paths.length === 0) return false;
    if (!request.paths.every((p) => p !== null && paths.some((g) => glob(g, p)))) return false;
  }
  if (rule.title === undefined) return true;
  return request.title.length > MAX_MATCHED_CHARS ? null : glob(rule.title, request.title, false);
}

/** The first matching rule's decision, and its index (null: no rule matched, rejected). */
export function decideByPolicy(policy: PermissionPolicy, request: PolicyRequest): { decision: "allow" | "reject"; rule: number | null } {
  const glob = globTester();
  for (const [at, rule] of policy.rules.entries()) {
    const matched = matches(rule, request, glob);
    if (matched === null) break;
    if (matched) return { decision: rule.decision, rule: at };
  }
  return { decision: "reject", rule: null };
}

/** The kinds `--permission-mode acceptEdits` allows. */
const EDIT_KINDS: ReadonlySet<string> = new Set(["edit", "delete", "move"]);

export type PermissionDecision = "allow" | "reject";

/**
 * Where an absolute path really lands (symlinks followed as the OS would), null
 * when it cannot name a file there: given by the IO boundary (src/io/physical-path.ts).
 */
export type PhysicalPath = (absolute: string) => string | null;

/** Every path is outside: what a caller that cannot look at the disk gets, so no path rule allows anything. */
export const NO_DISK: PhysicalPath = () => null;

/** The session's folder the policy's paths are relative to, and how a path is resolved on the disk. */
export interface PolicyPlace {
  cwd: string;
  physical: PhysicalPath;
}

/** Who answers a permission request: the --permissions file (its rules, first match wins), else --permission-mode; paths relative to the folder. */
export interface PermissionRules extends PolicyPlace {
  mode?: PermissionMode;
  policy?: PermissionPolicy;
}

/**
 * One permission request's answer, for every agent that asks agentport (the
 * ACP bridge, opencode --serve): by the policy file when there is one (`rule`:
 * the index of the rule that matched, null when none did: rejected), else by
 * the mode (default, plan, dontAsk reject; acceptEdits allows the edit kinds;
 * bypassPermissions all). `how`: for a rejection, how the user would allow it.
 */
export function decidePermission(
  rules: PermissionRules,
  request: PolicyRequest,
): { decision: PermissionDecision; rule?: number | null; how: string } {
  if (rules.policy !== undefined) {
    const { decision, rule } = decideByPolicy(rules.policy, request);
    const how =
      rule === null ? `no rule of ${rules.policy.source} allows it; add one` : `rule ${rule + 1} of ${rules.policy.source} ${decision}s it`;
    return { decision, rule, how };
  }
  const mode = rules.mode;
  const decision = mode === "bypassPermissions" || (mode === "acceptEdits" && EDIT_KINDS.has(request.kind)) ? "allow" : "reject";
  return {
    decision,
    how: `allow it with ${EDIT_KINDS.has(request.kind) ? "--permission-mode acceptEdits (or bypassPermissions)" : "--permission-mode bypassPermissions"}`,
  };
}

// A URI (`file:///…`) or a path with a NUL is not a path the policy can place.
const NOT_A_PATH = /^[A-Za-z][A-Za-z0-9+.-]*:|\0/;

/**
 * A path as the policy compares it: where it really lands (relative paths from
 * the folder, symlinks followed), relative to the folder's own real path; null
 * when it lands outside the folder or cannot be placed.
 */
export function policyPath(path: string, place: PolicyPlace): string | null {
  if (path.length > MAX_MATCHED_CHARS || NOT_A_PATH.test(path)) return null;
  const cwd = place.physical(place.cwd);
  const real = place.physical(path.startsWith("/") ? path : `${place.cwd}/${path}`);
  if (cwd === null || real === null) return null;
  const base = cwd.replace(/\/+$/, "");
  const rel = real === base ? "" : real.startsWith(`${base}/`) ? real.slice(base.length + 1) : null;
  if (rel === null) return null;
  const parts: string[] = [];
  for (const part of rel.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}
