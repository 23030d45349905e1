// What a user can ask of an agent beyond model, tools and thinking: the
// permission settings, the limits, system-prompt additions and arguments
// passed through verbatim. Each adapter's argv builder takes what its agent has.
import type { PermissionMode } from "../core/translate.ts";

export interface AgentExtras {
  /** claude's --permission-mode (pi has none). */
  permissionMode?: PermissionMode;
  /** A completed run with refused requests fails (exit 1). */
  failOnRefusal?: boolean;
  /** claude: --max-turns (pi: enforced by the supervisor). */
  maxTurns?: number;
  /** claude: --max-budget-usd (both: enforced by the supervisor on the running cost). */
  maxCostMicroUsd?: number;
  /** After agentport's own arguments, verbatim. */
  passThrough?: string[];
}
