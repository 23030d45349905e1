// What a run is given once the settings are resolved (cli/agent-options.ts
// builds it): the typed request and what it points at, read from disk. The
// adapters read only this, never a raw flag.
import type { Env } from "../core/env.ts";
import type { JsonSchema } from "../core/envelope.ts";
import type { PermissionPolicy } from "../core/permissions.ts";
import type { SupervisorOptions } from "../core/supervisor.ts";
import type { ThinkingLevel } from "../core/translate.ts";
import type { LoadedConfig } from "../config/load.ts";
import type { BirthRequest } from "../config/request.ts";
import type { AgentKind, Settings, Sources } from "../config/resolve.ts";
import type { AgentExtras } from "./extras.ts";

export interface Common {
  cwd: string;
  home: string;
  maxLineBytes: number;
  supervision: SupervisorOptions;
  onWarning: (text: string) => void;
  lingerMs: number;
  profile?: string[];
  env: Env;
  keepStream: boolean;
  keepPrompt: boolean;
}

/** Everything a run needs, resolved once: the seam `run`, `resume`, `config` and `bon` share. */
export interface AgentSetup {
  settings: Settings;
  sources: Sources;
  /** The named agent, when one is used (--as, or the config's default_agent). */
  name: string | null;
  agent: AgentKind;
  config: LoadedConfig | null;
  /** The flags as given: only the binary's lookup reads them (`--<name>-bin`, agentBinary); every setting is in `settings`. */
  args: Record<string, unknown>;
  common: Common;
  schema: JsonSchema | null;
  /** --permissions FILE, read and checked: the policy every permission request of the run is answered by. */
  permissions: PermissionPolicy | null;
  /** Every --append-system-prompt as text (files read), joined: the user's part of what is appended. */
  appendSystemPrompt?: string;
  /** The env files read for the agent, in order (the config's, then --env-file). */
  envFiles: string[];
  model?: string;
  tools?: string[];
  thinking?: ThinkingLevel;
  nudges: number;
  /** What the session is born with: the ledger keeps it, resume reuses it. */
  request: BirthRequest & { route?: string };
  /** Told each phase's exact argv before it runs (--verbose). */
  onArgv?: (argv: readonly string[]) => void;
  pi: { gateway: string; direct: boolean; thinking?: ThinkingLevel; tools?: string[]; requireExt: string[]; sessionDir: string };
}

/** What every runner takes beyond the adapter's words: the user's system prompt, the extras, the birth request, --verbose's argv. */
export function runnerOptions(setup: AgentSetup) {
  return { appendSystemPrompt: setup.appendSystemPrompt, extras: agentExtras(setup), request: setup.request, onArgv: setup.onArgv };
}

/** What the user asked of the agent beyond model, tools and thinking, for the runners' argv builders. */
export function agentExtras(setup: AgentSetup): AgentExtras {
  const s = setup.settings;
  return {
    permissionMode: s.permissionMode ?? undefined,
    failOnRefusal: s.failOnRefusal,
    maxTurns: s.maxTurns ?? undefined,
    maxCostMicroUsd: s.maxCostMicroUsd ?? undefined,
    passThrough: s.passThrough,
  };
}
