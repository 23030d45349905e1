// An ACP agent's own session modes against agentport's --permission-mode.
// claude-agent-acp starts in "auto" (its classifier decides and nothing is
// asked) and gemini can be in "yolo": in such a mode no
// session/request_permission ever reaches agentport's policy. So where the
// agent advertises modes, the session is switched (session/set_mode) to the
// one that matches agentport's, by an allow-list of the ids the agents use;
// bypassPermissions leaves the agent's own mode (agentport allows what is
// asked anyway). Pure.
import type { PermissionMode } from "../agents.ts";
import { objectOf } from "../record.ts";
import { MAX_VALUE_CHARS } from "../reduction.ts";
import { clean } from "../text.ts";

/** The agent mode ids that carry agentport's mode, best first (Claude Code's words, then gemini's). */
const WANTED: Record<PermissionMode | "none", readonly string[]> = {
  none: ["default"],
  default: ["default"],
  plan: ["plan", "default"],
  dontAsk: ["dontAsk", "default"],
  // An agent that cannot accept edits by itself asks, and the policy allows the edits.
  acceptEdits: ["acceptEdits", "autoEdit", "default"],
  bypassPermissions: [],
};

export interface ModeChoice {
  /** The mode the session is in (null: the agent advertises none). */
  current: string | null;
  /** The mode to switch to before the prompt (null: keep it). */
  set: string | null;
}

/** From a session/new or session/load result's `modes`: which mode to set for agentport's permission mode. */
export function chooseMode(modes: unknown, mode: PermissionMode | undefined): ModeChoice {
  const m = objectOf(modes);
  if (m === null) return { current: null, set: null };
  const current = clean(m.currentModeId, MAX_VALUE_CHARS) || null;
  const available = (Array.isArray(m.availableModes) ? m.availableModes : [])
    .map((entry) => objectOf(entry)?.id)
    .filter((id): id is string => typeof id === "string");
  const wanted = WANTED[mode ?? "none"].find((id) => available.includes(id));
  return { current, set: wanted === undefined || wanted === current ? null : wanted };
}
