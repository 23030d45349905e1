// --isolate, from settings to the command's sandbox (src/io/sandbox.ts): the
// agent's folder, its state folders (its row's axes: where the session
// lives), agentport's home readable; refused in one line (exit 5)
// where bwrap cannot work, never run without it.
import { existsSync } from "node:fs";
import type { AgentName } from "../core/agents.ts";
import type { Env } from "../core/env.ts";
import type { Network } from "../config/resolve.ts";
import { AGENTS } from "../agents/table.ts";
import { axesOf, stateFolders } from "../agents/axes.ts";
import { isolateAgents, probeSandbox, type Sandbox } from "../io/sandbox.ts";
import type { AgentSetup } from "./agent-options.ts";
import { environmentError } from "./errors.ts";

export interface IsolationInput {
  agent: AgentName;
  env: Env;
  /** agentport's home: readable (pi's extension lives there), its run folders made writable per phase. */
  home: string;
  network: Network;
  /** More folders the agent writes (a batch's run folder). */
  writable: string[];
  /** agentport's session folder, writable where the agent's session lives there (pi). */
  sessionDir?: string;
  /** `--serve`: the row's served axes say where the session lives. */
  serve?: boolean;
}

/** The sandbox for these agents; an environment error (exit 5) when bwrap cannot make one here. */
export function sandboxFor(input: IsolationInput, flag = "--isolate"): Sandbox {
  const probe = probeSandbox();
  if (!probe.ok) throw environmentError(`${flag}: ${probe.reason}; ${probe.fix} (or run without ${flag})`);
  return sandboxOf(input);
}

export function sandboxOf(input: IsolationInput): Sandbox {
  const state = stateFolders(axesOf(AGENTS[input.agent], input.serve === true), input.env, input.sessionDir);
  // A state file is kept writable only where it exists (a missing folder is made; a missing file cannot be bound).
  const writable = [...new Set([...state.filter((p) => !p.endsWith(".json") || existsSync(p)), ...input.writable])];
  // $HOME stays readable where the private /tmp would hide it (a home under /tmp).
  return { network: input.network, writable, readable: [input.home, ...(input.env.HOME ? [input.env.HOME] : [])] };
}

/** run and resume: with --isolate (or `isolate: true`), every agent of this command runs in the sandbox. */
export function isolateSetup(setup: AgentSetup): void {
  if (setup.settings.isolate !== true) return;
  const { common } = setup;
  isolateAgents(
    sandboxFor({
      agent: setup.agent,
      env: common.env,
      home: common.home,
      network: setup.settings.network,
      writable: [],
      sessionDir: setup.pi.sessionDir,
      serve: setup.settings.serve,
    }),
  );
}
