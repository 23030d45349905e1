// What an agent is to agentport: the seed's three axes (how the prompt gets
// in, how the end of a turn is observed, where the session lives) and how its
// session id is chosen, as fields the commands read (axes.ts); and the
// operations every command dispatches through (run or resume one phase, the
// argv a run would start with, hand a session to a person, find a session the
// ledger does not know, replay a captured stream, probe the installed binary
// at zero tokens, say whether a run can start here). One object per agent,
// listed in table.ts only.
import type { AgentName, FakeName } from "../core/agents.ts";
import type { ProgressSink } from "../core/progress.ts";
import type { PermissionAsker } from "../core/acp/permission.ts";
import type { AgentWords } from "../core/translate.ts";
import type { Tokens } from "../core/verdict.ts";
import type { Env } from "../core/env.ts";
import type { CredentialsCheck, Tested } from "../core/readiness.ts";
import type { Ledger, SessionRow } from "../io/ledger.ts";
import type { AgentSetup } from "./setup.ts";
import type { FoundSession } from "./origin.ts";
import type { RunOutcome } from "./phase.ts";
import type { SettingsRow } from "./settings.ts";
import type { Settings } from "../config/resolve.ts";

export interface Axes {
  /** How the prompt gets in: on the agent's stdin (closed after), in a JSON-RPC request, POSTed over HTTP. */
  injection: "stdin" | "rpc" | "http";
  /** How the end of a turn is observed: the stream's end and its last records, the JSON-RPC answer and events, a server's SSE events. */
  observation: "stream-end" | "rpc-events" | "sse";
  /**
   * Where the session's state lives: a JSONL file agentport names in its own
   * session folder, the agent's per-project folder, the agent's home, or a
   * server's database; and the folders the agent writes there, kept writable
   * under --isolate (`$VAR/sub|~/path`: the first alternative that applies).
   */
  state: { lives: "local-jsonl" | "agent-project-folder" | "agent-home" | "remote"; folders: readonly string[] };
  /** Who names the session: agentport picks the id, names pi's session file, or learns the agent's id from its first record. */
  sessionId: "chosen" | "named-file" | "learned";
}

export interface Capabilities {
  /** A session can be continued by id. */
  resume: boolean;
  /** A person can take a session over on a terminal. */
  interactive: boolean;
  /** More prompts can be sent to a live process. */
  send: boolean;
}

/** One turn of a run: the binary, the prompt, and the session to continue when it is a resume. */
export interface Turn {
  bin: string;
  prompt: string;
  resume?: SessionRow;
  /** A new session started from this one's history (best-of-N's arms from the prime; only where the row's `bon` says `fork`). */
  fork?: SessionRow;
  /** The id a new session is declared with (`agentport acp` names it in session/new); default a fresh UUID. */
  sessionId?: string;
  /** Who drives agentport over ACP, asked the agent's permission requests (acp; without a policy file). */
  askPermission?: PermissionAsker;
  progress?: ProgressSink;
  signal?: AbortSignal;
}

/** A doctor finding: what was probed and what to do when it is not ok. */
export interface Finding {
  check: string;
  ok: boolean;
  detail: string;
  fix?: string;
  /** The agent's version, on the finding that names the agent. */
  version?: string;
}

/** The roster's words as one agent takes them (`agentport config`). */
export interface Told {
  translated: { agent: AgentName; model?: string; tools?: string[]; thinking?: string; env: Record<string, string> };
  /** The same, as the flags and variables the agent gets. */
  words: string[];
}

/** A replay of a session's phase (`replay SESSION-ID`): whose it is, and the run folder it left. */
export interface ReplayedPhase {
  /** agentport's session id, which the live verdict names. */
  sessionId: string;
  /** The phase's run folder: what it left beside the stream (codex's stderr.log) is read as the live run read it. */
  runDir: string;
  /** The tokens the session's earlier phases recorded (codex's running thread total, less them, is the phase's). */
  earlier: Tokens;
}

export type { Replayer } from "../core/replayer.ts";
import type { Replayer } from "../core/replayer.ts";

/** Where the argv a preview shows has what only a run knows. */
export const SESSION_PLACEHOLDER = "<session-id>";
export const RUN_FOLDER_PLACEHOLDER = "<run folder>";

/** The argv a run would start with, and the version of the probe it was built from (null: none cached, capabilities assumed). */
export interface Preview {
  argv: string[];
  probed: string | null;
}

export interface AgentAdapter {
  name: AgentName;
  axes: Axes;
  /** The axes of its `--serve` mode, for the agent that has one (opencode: HTTP / SSE). */
  served?: Axes;
  capabilities: Capabilities;
  /** What the verdict reads, in a sentence (the README's agent table). */
  verdictReads: string;
  /** The command on PATH, `$AGENTPORT_<NAME>_BIN`, `--<name>-bin`, and how to install it. */
  bin: {
    command: string;
    env: string;
    install: string;
  };
  fake: FakeName;
  /** The agent's own harmless settings an env file may set (no code loading, no destination, no state folder: core/env-keys.ts refuses those anyway). */
  envSettings: readonly string[];
  /** Every setting a user can give, as this agent takes it or refuses it (before anything starts). */
  settings: SettingsRow;
  translate(words: AgentWords): Told;
  /** The model as the agent is told it, where that differs from --model (pi: its gateway route); recorded in the birth request, shown by `config`. */
  modelRoute?(model: string, s: Pick<Settings, "gateway" | "direct">): string;
  /** One phase: a new session, or `turn.resume` of one the ledger knows (in its birth folder: checked before). */
  run(ledger: Ledger, setup: AgentSetup, turn: Turn): Promise<RunOutcome>;
  /** The argv a new session's run would start with (`config`), from the probe the ledger has cached, else assumed capabilities; never runs the agent. */
  previewArgv(setup: AgentSetup, bin: string, ledger: Ledger | null): Promise<Preview>;
  /** The command that hands `session` to a person on a terminal. */
  interactiveArgv(session: SessionRow, bin: string, ledger: Ledger, env: Env): Promise<string[]>;
  /** The birth folder a session file agentport named says (its header; null: none), for an agent whose session id is a named file. */
  sessionFileCwd?(file: string): string | null;
  /** Sessions on disk the ledger does not know, by id or prefix. */
  findSessions(idOrPrefix: string, setup: { piSessionDir: string }): FoundSession[];
  /** A captured stream reduced and judged; `phase` when it is a session's, so the verdict is the one the live run gave. */
  replay(cwd: string, emit: ProgressSink | undefined, phase?: ReplayedPhase): Replayer;
  /** doctor: the versions agentport was tested with (null: none of its own), and the credentials a run would read (names, never values). */
  readiness: { tested: Tested; credentials: CredentialsCheck };
  /** Zero tokens: version, dialect, flags, and the agent-specific checks. */
  probe(bin: string, ledger: Ledger | null): Promise<Finding[]>;
  /**
   * Best-of-N: `armsFrom: "fork"`, its arms start as forks of the prime's session, in the prime's folder (`run` takes `turn.fork`);
   * `ownSessions`, src/bon drives its sessions itself (pi's RPC mode, opencode's), not `run`'s path. Absent: each arm from the spec, on `run`'s path.
   */
  bon?: { armsFrom?: "fork"; ownSessions?: true };
}
