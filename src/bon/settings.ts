// What bon's own sessions take otherwise than `run` does (the rest of the
// agent's row holds): pi's RPC turns take a message while they run (`steer`),
// so --grace is told there. opencode's row holds as it is: its --serve
// sessions take the wrap-up, its one-shot `opencode run` refuses it. A batch
// of several agents runs every arm through `run`'s path, where `run`'s rows
// hold. Pure.
import type { SettingsRow } from "../agents/settings.ts";
import type { AgentKind } from "../config/resolve.ts";
import type { BonAgentName } from "./names.ts";

/** `agent`'s settings as a batch of `batch` (null: several agents) takes them otherwise than `run`. */
export function bonRow(batch: BonAgentName | null, agent: AgentKind): Partial<SettingsRow> {
  if (batch !== agent) return {};
  if (agent === "pi") return { grace: { how: "each RPC turn is sent `steer`; pi gives it to the model after its current step" } };
  return {};
}
