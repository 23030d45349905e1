// The adapter table: the only place that lists the agents' adapters. run,
// resume, replay, doctor, config, selftest and the roster dispatch through
// it; adding an agent is one folder (src/agents/<name>/, its reducer under
// src/core/<name>/, its fake under src/fake/<name>/), its name in
// core/agents.ts, and one row here. The record is typed over the names, so a
// name without an adapter does not compile.
import type { AgentName } from "../core/agents.ts";
import { AGENT_NAMES, AGENT_TRAITS } from "../core/agents.ts";
import type { AgentAdapter } from "./adapter.ts";
import { claudeAdapter } from "./claude/adapter.ts";
import { codexAdapter } from "./codex/adapter.ts";
import { geminiAdapter } from "./gemini/adapter.ts";
import { opencodeAdapter } from "./opencode/adapter.ts";
import { piAdapter } from "./pi/adapter.ts";
import { acpAdapter } from "./acp/adapter.ts";
import { resolveBin } from "./resolve-bin.ts";
import { environmentError } from "../core/errors.ts";

export const AGENTS: Readonly<Record<AgentName, AgentAdapter>> = {
  claude: claudeAdapter,
  pi: piAdapter,
  codex: codexAdapter,
  gemini: geminiAdapter,
  opencode: opencodeAdapter,
  acp: acpAdapter,
};

export { AGENT_NAMES, type AgentName };

export const adapterOf = (agent: AgentName): AgentAdapter => AGENTS[agent];

/** Every adapter, in the table's order. */
export const adapters = (): AgentAdapter[] => AGENT_NAMES.map((name) => AGENTS[name]);

/** The agent's binary: `--<name>-bin`, else `$AGENTPORT_<NAME>_BIN`, else PATH; a miss is one line and exit 5. */
export function agentBinary(adapter: AgentAdapter, args: Record<string, unknown>): string {
  if (!AGENT_TRAITS[adapter.name].namedBinary) return adapter.bin.command;
  const flag = args[`${adapter.bin.command}-bin`];
  const bin = resolveBin(adapter.bin.command, typeof flag === "string" ? flag : undefined, adapter.bin.env);
  if (!bin.ok) throw environmentError(bin.reason);
  return bin.path;
}

/** `--<name>-bin` for every agent, for the commands that find binaries (run, resume, doctor). */
export const BIN_ARGS: Record<string, { type: "string"; description: string }> = Object.fromEntries(
  AGENT_NAMES.filter((name) => AGENT_TRAITS[name].namedBinary).map((name) => [
    `${AGENTS[name].bin.command}-bin`,
    { type: "string" as const, description: `The ${name} binary (else $${AGENTS[name].bin.env}, else PATH)` },
  ]),
);
