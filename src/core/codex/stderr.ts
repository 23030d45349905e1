// codex's refused tool calls, which only its stderr shows: one
// `ERROR codex_core::tools::router: error=<why>` tracing line per refused or
// failed call (an unknown tool, an escalation under approval policy never, a
// patch blocked by the sandbox, an execpolicy rule, the reviewer's deny).
// The subject names the kind of refusal, never the command (a command line is
// where credentials are typed). Pure.
import { MAX_REFUSED } from "../reduction.ts";
import { clean } from "../text.ts";
import type { Refused } from "../verdict.ts";

const ROUTER_ERROR = "ERROR codex_core::tools::router: error=";

// The refusal's kind, by the start of codex's own message (codex 0.169.0, ground truth §2, §5).
const SUBJECTS: readonly [prefix: string, subject: (rest: string) => string][] = [
  ["unsupported call: ", (rest) => `unsupported tool ${clean(rest.split(/\s/)[0], 64)}`],
  ["approval policy is Never", () => "escalated permissions (approval policy never)"],
  ["patch rejected", () => "apply_patch (sandbox)"],
  [
    "exec_command failed: CreateProcess",
    (rest) =>
      rest.includes("policy forbids")
        ? "exec_command (execpolicy rule)"
        : rest.includes("Rejected(")
          ? "exec_command (reviewer)"
          : "exec_command",
  ],
];

export function routerRefusals(stderr: string): { refused: Refused[]; count: number } {
  const refused: Refused[] = [];
  let total = 0;
  for (const line of stderr.split("\n")) {
    const at = line.indexOf(ROUTER_ERROR);
    if (at < 0) continue;
    total += 1;
    if (refused.length >= MAX_REFUSED) continue;
    const why = line.slice(at + ROUTER_ERROR.length);
    const row = SUBJECTS.find(([prefix]) => why.startsWith(prefix));
    refused.push({ kind: "permission", subject: row ? row[1](why.slice(row[0].length)) : "tool call" });
  }
  return { refused, count: total };
}
