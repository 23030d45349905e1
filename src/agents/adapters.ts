// The adapter seam. Each agent declares how it is driven along the seed's
// three axes (how the prompt gets in, how the end of a turn is observed,
// where the session lives) and what it can do; commands dispatch through
// this table instead of testing agent names. Every one-shot adapter runs as
// runPhase does: start → wait → kill in every case → reconcile → judge and
// classify. Adding an agent is one adapter file, one row here, and its fake.
import type { PiCapabilities } from "../core/pi/capabilities.ts";
import type { Ledger, SessionRow } from "../io/ledger.ts";
import type { AgentName } from "../io/ledger.ts";
import { claudeModel } from "../core/translate.ts";
import { claudeInteractiveArgv } from "./claude.ts";
import { piInteractiveArgv } from "./pi-run.ts";

export interface Capabilities {
  /** How the prompt gets in. */
  injection: "stdin" | "rpc";
  /** How the end of a turn is observed. */
  observation: "stream-end" | "rpc-events";
  /** Where the session's state lives. */
  state: "local-jsonl" | "agent-project-folder";
  /** A session can be continued by id. */
  resume: boolean;
  /** A person can take a session over on a terminal. */
  interactive: boolean;
  /** More prompts can be sent to a live process. */
  send: boolean;
}

export interface Adapter {
  name: "claude" | "pi" | "pi-rpc";
  agent: AgentName;
  capabilities: Capabilities;
  /** The command that hands `session` to a person on a terminal. */
  interactiveArgv?: (session: SessionRow, bin: string, caps: PiCapabilities | null) => string[];
}

export const ADAPTERS: Readonly<Record<Adapter["name"], Adapter>> = {
  claude: {
    name: "claude",
    agent: "claude",
    capabilities: { injection: "stdin", observation: "stream-end", state: "agent-project-folder", resume: true, interactive: true, send: false },
    interactiveArgv: (session, bin) =>
      claudeInteractiveArgv({ bin, sessionId: session.agent_session_id ?? session.id, model: session.model ? claudeModel(session.model) : undefined }),
  },
  pi: {
    name: "pi",
    agent: "pi",
    capabilities: { injection: "stdin", observation: "stream-end", state: "local-jsonl", resume: true, interactive: true, send: false },
    interactiveArgv: (session, bin, caps) => {
      if (caps === null) throw new Error("pi's capabilities are needed to hand a session over");
      return piInteractiveArgv({ bin, caps, sessionId: session.agent_session_id ?? session.id, sessionFile: session.session_file, sessionDir: session.session_dir });
    },
  },
  // The live session (src/rpc/): best-of-N primes and arms. Same flags, reducer and judge as `pi`.
  "pi-rpc": {
    name: "pi-rpc",
    agent: "pi",
    capabilities: { injection: "rpc", observation: "rpc-events", state: "local-jsonl", resume: true, interactive: false, send: true },
  },
};

/** The one-shot adapter of an agent: what `run`, `resume` and `resume --interactive` go through. */
export function oneShot(agent: AgentName): Adapter {
  return ADAPTERS[agent];
}

/** Whether the adapter needs pi's probed capabilities before it can build a command line. */
export const needsProbe = (adapter: Adapter): boolean => adapter.agent === "pi";

export type { Ledger };
