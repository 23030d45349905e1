// ACP has no standard cost: `--max-cost` binds an ACP agent only when it is
// known to report one. An allow-list of programs (by the basename of the
// command's first word) measured reporting `usage_update.cost`: anything else,
// a wrapper (`sh -c …`, `npx …`) included, is unknown. Pure.

/** The programs seen reporting their cost over ACP, with the words that must follow them. */
const COST_REPORTERS: readonly { program: string; args: readonly string[]; seen: string }[] = [
  // ground truth acp-gemini-0.61.0-opencode-1.18.33: the session's running total before each result.
  { program: "opencode", args: ["acp"], seen: "opencode acp" },
  // @agentclientprotocol/claude-agent-acp 0.101.0: claude's total_cost_usd with each result (test/e2e-acp-claude).
  { program: "claude-agent-acp", args: [], seen: "claude-agent-acp" },
];

/** How the known reporters are named in a refusal. */
export const COST_REPORTER_NAMES = COST_REPORTERS.map((r) => r.seen).join(", ");

export type AcpCost = { kind: "reported"; agent: string } | { kind: "unknown"; program: string };

/** Whether the ACP agent run by `command` reports its cost. */
export function acpCostOf(command: readonly string[] | null): AcpCost {
  const [first = "", ...rest] = command ?? [];
  const program = first.slice(first.lastIndexOf("/") + 1);
  const known = COST_REPORTERS.find((r) => r.program === program && r.args.every((word, i) => rest[i] === word));
  return known === undefined ? { kind: "unknown", program } : { kind: "reported", agent: known.seen };
}

/** The refusal line for `--max-cost` (from `label`) with an ACP agent whose cost is unknown, else null. */
export function acpMaxCostRefusal(command: readonly string[] | null, label: string): string | null {
  const cost = acpCostOf(command);
  if (cost.kind === "reported") return null;
  return `${label}: the ACP agent ${JSON.stringify(cost.program)} is not known to report its cost (ACP has no standard cost), so the run could not be bounded by it; bound it with --max-tokens, or run an ACP agent that reports its cost (${COST_REPORTER_NAMES})`;
}
