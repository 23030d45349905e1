// The permission bridge's policy: every `session/request_permission` gets an
// answer at once, from agentport's --permission-mode (Claude Code's words).
// default, plan, dontAsk: reject; acceptEdits: allow the edit kinds;
// bypassPermissions: allow all. Pure.
import type { PermissionMode } from "../agents.ts";
import type { PermissionOption, PermissionOutcome } from "./protocol.ts";

const EDIT_KINDS: ReadonlySet<string> = new Set(["edit", "delete", "move"]);

export type PermissionDecision = "allow" | "reject";

export function decidePermission(mode: PermissionMode | undefined, kind: string): PermissionDecision {
  if (mode === "bypassPermissions") return "allow";
  if (mode === "acceptEdits" && EDIT_KINDS.has(kind)) return "allow";
  return "reject";
}

/** The option that says `decision` once (else always); none: the request is answered `cancelled`. */
export function permissionOutcome(decision: PermissionDecision, options: readonly PermissionOption[]): PermissionOutcome {
  const wanted = decision === "allow" ? ["allow_once", "allow_always"] : ["reject_once", "reject_always"];
  for (const kind of wanted) {
    const option = options.find((o) => o.kind === kind && typeof o.optionId === "string");
    if (option !== undefined) return { outcome: { outcome: "selected", optionId: option.optionId } };
  }
  return { outcome: { outcome: "cancelled" } };
}

/** How to allow a rejected request of this kind, for the refused list. */
export function howToAllow(kind: string): string {
  return EDIT_KINDS.has(kind) ? "--permission-mode acceptEdits (or bypassPermissions)" : "--permission-mode bypassPermissions";
}
