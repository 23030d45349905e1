// --isolate, from settings to the command's sandbox (src/io/sandbox.ts): the
// agent's folder, its state folders (the adapter table's AGENT_STATE, pi's
// session folder), agentport's home readable; refused in one line (exit 5)
// where bwrap cannot work, never run without it.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../core/agents.ts";
import type { Env } from "../core/env.ts";
import type { Network } from "../config/resolve.ts";
import { AGENT_STATE } from "../agents/table.ts";
import { isolateAgents, probeSandbox, type Sandbox } from "../io/sandbox.ts";
import type { AgentSetup } from "./agent-options.ts";
import { environmentError } from "./errors.ts";

/** One AGENT_STATE entry as a path: the first alternative whose variable is set (`~` is $HOME); null when none applies. */
export function statePath(entry: string, env: Env): string | null {
  for (const alt of entry.split("|")) {
    const m = /^(?:\$([A-Z_]+)|~)(.*)$/.exec(alt);
    if (m === null) continue;
    const base = m[1] === undefined ? env.HOME : env[m[1]];
    if (base) return join(base, m[2] ?? "");
  }
  return null;
}

export interface IsolationInput {
  agent: AgentName;
  env: Env;
  /** agentport's home: readable (pi's extension lives there), its run folders made writable per phase. */
  home: string;
  network: Network;
  /** More folders the agent writes (pi's session folder, a batch's run folder). */
  writable: string[];
}

/** The sandbox for these agents; an environment error (exit 5) when bwrap cannot make one here. */
export function sandboxFor(input: IsolationInput, flag = "--isolate"): Sandbox {
  const probe = probeSandbox();
  if (!probe.ok) throw environmentError(`${flag}: ${probe.reason}; ${probe.fix} (or run without ${flag})`);
  return sandboxOf(input);
}

export function sandboxOf(input: IsolationInput): Sandbox {
  const state = AGENT_STATE[input.agent].map((e) => statePath(e, input.env)).filter((p): p is string => p !== null);
  // A state file is kept writable only where it exists (a missing folder is made; a missing file cannot be bound).
  const writable = [...state.filter((p) => !p.endsWith(".json") || existsSync(p)), ...input.writable];
  // $HOME stays readable where the private /tmp would hide it (a home under /tmp).
  return { network: input.network, writable, readable: [input.home, ...(input.env.HOME ? [input.env.HOME] : [])] };
}

/** run and resume: with --isolate (or `isolate: true`), every agent of this command runs in the sandbox. */
export function isolateSetup(setup: AgentSetup): void {
  if (setup.settings.isolate !== true) return;
  const { common } = setup;
  isolateAgents(sandboxFor({ agent: setup.agent, env: common.env, home: common.home, network: setup.settings.network, writable: setup.agent === "pi" ? [setup.pi.sessionDir] : [] }));
}
