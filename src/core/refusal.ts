// Refused requests: what would have allowed each one, and --fail-on-refusal.
// A run under `claude -p` has nobody to ask, so a refused Write leaves the run
// "completed" having changed nothing; these say so, and can make it fail. Pure.
import { failure, type Failure } from "./failure.ts";
import type { Refused, Verdict } from "./verdict.ts";
import { AGENT_TRAITS } from "./agents.ts";

const EDIT_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);

/** The flag or tool that would have allowed one refused request. */
export function allowedBy(agent: Verdict["agent"], refused: Refused): string {
  const tool = refused.subject.split(":")[0]?.trim() ?? "";
  if (refused.kind === "question") return "a question needs a person: give the answer in the prompt";
  if (!AGENT_TRAITS[agent].permissionModes || refused.kind === "dialog")
    return "a dialog needs a person: allow the tool with --tools, or answer it in the prompt";
  if (EDIT_TOOLS.has(tool)) return `--permission-mode acceptEdits (or --tools ${tool})`;
  if (tool === "") return "--permission-mode bypassPermissions";
  return `--tools ${tool} (or --permission-mode bypassPermissions)`;
}

/** One stderr line per refused request, naming what would allow it (an ACP refusal names it itself: the mode, the policy file's rule, or the client that said no). */
export function refusalGuidance(verdict: Pick<Verdict, "agent" | "refused">): string[] {
  return verdict.refused.map(
    (r) =>
      `refused ${r.kind}: ${r.subject}${AGENT_TRAITS[verdict.agent].refusalsExplained ? "" : ` — to allow it: ${allowedBy(verdict.agent, r)}`}`,
  );
}

/** With --fail-on-refusal: why a completed run with refused requests fails, or null when nothing was refused. */
export function refusalFailure(refused: readonly Refused[]): Failure | null {
  const n = refused.length;
  if (n === 0) return null;
  const first = refused[0]?.subject ?? "";
  return failure(
    "refusals",
    `refused: ${n} request${n === 1 ? " was" : "s were"} refused (${first}${n > 1 ? ", …" : ""}) and --fail-on-refusal is set`,
  );
}
