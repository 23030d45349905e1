// The permission requests of an opencode serve turn: each `permission.asked`
// remembered until its `permission.replied`; a rejected one (and a call to a
// tool opencode does not offer) is a refused request. Pure.
import { toolKind } from "../acp/forward.ts";
import { policyPath, type PolicyPlace, type PolicyRequest } from "../permissions.ts";
import { objectOf, type Json } from "../record.ts";
import { MAX_TOOL_CHARS } from "../progress.ts";
import { MAX_REFUSED, MAX_VALUE_CHARS } from "../reduction.ts";
import { clean } from "../text.ts";
import type { Refused } from "../verdict.ts";

/** A permission opencode asks for, as the phase needs it to answer. */
export interface PermissionAsked {
  /** `per_…`: what the reply names. */
  id: string;
  /** The permission (`bash`, `edit`, `external_directory`, …). */
  permission: string;
  /** What it is asked for (a command, a path), cleaned and bounded. */
  subject: string;
  /** The files it touches, as opencode names them (the `filepath` it gives, else a file permission's patterns). */
  paths: string[];
}

// opencode's permissions that name files by their patterns (read by its path; edit by the path relative to the project).
const FILE_PERMISSIONS: ReadonlySet<string> = new Set(["read", "edit"]);
const MAX_PATHS = 64;

/** What the policy sees of an ask: its kind (opencode's permission as ACP's kind), its paths relative to the folder, its subject as the title. */
export function policyRequest(asked: PermissionAsked, place: PolicyPlace): PolicyRequest {
  return { kind: toolKind(asked.permission), paths: asked.paths.map((path) => policyPath(path, place)), title: asked.subject };
}

// Requests remembered until their reply; past this the oldest are forgotten.
const MAX_PENDING = 256;

export class ServePermissions {
  private readonly pending = new Map<string, PermissionAsked>();
  readonly refused: Refused[] = [];
  refusedCount = 0;
  askedCount = 0;
  allowedCount = 0;

  /** A `permission.asked`'s properties; null when it names no request. */
  asked(properties: Json): PermissionAsked | null {
    const id = clean(properties.id, MAX_VALUE_CHARS);
    if (!id) return null;
    this.askedCount += 1;
    const permission = clean(properties.permission, MAX_TOOL_CHARS) || "permission";
    const patterns = Array.isArray(properties.patterns) ? properties.patterns.filter((p): p is string => typeof p === "string") : [];
    const filepath = objectOf(properties.metadata)?.filepath;
    const paths = typeof filepath === "string" ? [filepath] : FILE_PERMISSIONS.has(permission) ? patterns.slice(0, MAX_PATHS) : [];
    const asked = { id, permission, subject: clean(patterns.join(", "), MAX_VALUE_CHARS), paths };
    if (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value as string);
    this.pending.set(id, asked);
    return asked;
  }

  /** A `permission.replied`'s properties: the permission it rejected, else null (allowed). */
  replied(properties: Json): string | null {
    const id = clean(properties.requestID, MAX_VALUE_CHARS);
    const asked = this.pending.get(id);
    this.pending.delete(id);
    if (properties.reply !== "reject") {
      this.allowedCount += 1;
      return null;
    }
    const what = asked === undefined ? "permission" : asked.subject ? `${asked.permission}: ${asked.subject}` : asked.permission;
    this.refuse(`${what} (rejected)`);
    return asked?.permission ?? "permission";
  }

  refuse(subject: string): void {
    this.refusedCount += 1;
    if (this.refused.length < MAX_REFUSED) this.refused.push({ kind: "permission", subject: clean(subject, MAX_VALUE_CHARS) });
  }
}
