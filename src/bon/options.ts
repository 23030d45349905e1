// What a best-of-N batch is told, once resolved: absolute paths, one model
// route per arm, the gates, the agent's flags. This is the seam for a project
// config: anything (flags today, `agentport.json` tomorrow) that produces a
// BonOptions can run a batch with `runBon`.
import type { BudgetOptions } from "../core/budget.ts";
import type { Env } from "../core/env.ts";
import type { JsonSchema } from "../core/envelope.ts";
import type { PiCapabilities } from "../core/pi/capabilities.ts";
import type { ProgressSink } from "../core/progress.ts";
import type { ThinkingLevel } from "../core/translate.ts";
import type { LedgerLocation } from "../io/ledger-url.ts";
import type { Sandbox } from "../io/sandbox.ts";
import type { AgentSetup } from "../agents/setup.ts";
import type { BonAgentName } from "./names.ts";

export const MIN_ARMS = 2;
export const MAX_ARMS = 5;
export const DEFAULT_ARMS = 3;
export const DEFAULT_SPEC_DIR = "specs";
export const DEFAULT_GATE_TIMEOUT_MS = 300_000;
export const DEMO_SPEC_NAME = "bon-demo.md";

export interface BonOptions {
  /** The folder the agent works in (absolute, symlinks resolved); inside a git work tree. */
  cwd: string;
  /** The spec (absolute). */
  spec: string;
  /** The spec folder (absolute): its untracked files are tolerated, never harvested, never cleaned. */
  specDir: string;
  /** One entry per arm: the model the arm runs on (pi: its route `provider/id`), or null for the agent's default model. */
  models: (string | null)[];
  /** One entry per arm: its agent (all the same but in a cross-agent batch, `--arms pi,claude`). */
  agents: BonAgentName[];
  /** The prime's route, or null for pi's default model. */
  primeModel: string | null;
  /** Shell commands (`sh -c`), run in the arm's folder in order; each must exit 0. */
  gates: string[];
  gateTimeoutMs: number;
  /** Shell commands run once in each workspace before its arm (the prime's workspace before the prime), with the gates' limits. */
  setup: string[];
  /** Ignored paths of the user's checkout (absolute) copied into each workspace (`cp -a --reflink=auto`). */
  copy: string[];
  /** Each arm in a workspace of its own, started with `pi --mode rpc --fork <prime file>`; else one workspace, one arm after the other. */
  parallel: boolean;
  /** With `parallel`: at most this many arms at once. */
  jobs: number;
  /** Apply the winner's patch to the user's checkout (`git apply --index`). */
  apply: boolean;
  /** The arms' (and the prime's) sandbox, the batch's run folder added when it is made; null: not isolated. */
  sandbox: Sandbox | null;

  // -- the agent ------------------------------------------------------------------
  /** The batch's agent (pi over its RPC mode; opencode a one-shot process per session, or with `serve` one server; the others through `run`'s path); null: a cross-agent batch. */
  agent: BonAgentName | null;
  /** Each arm agent's settings, resolved as `run` resolves them: what a turn through `run`'s path is asked. */
  setups: Partial<Record<BonAgentName, AgentSetup>>;
  /** Each arm agent's binary. */
  bins: Partial<Record<BonAgentName, string>>;
  /** opencode: every session of the batch on one `opencode serve`, arms forked over HTTP. */
  serve: boolean;
  /** The batch agent's binary (pi, opencode). */
  bin: string;
  /** pi's dialect; probed (and cached in the ledger) after the check when left out. */
  caps?: PiCapabilities;
  /** State folder: the ledger, the run folder, the extension. */
  home: string;
  /** The ledger, when it is not <home>/ledger.sqlite (--ledger, $AGENTPORT_LEDGER, the config's). */
  ledger?: LedgerLocation;
  /** pi's session folder (absolute). */
  sessionDir: string;
  /** off … max (translated for pi: src/core/translate.ts). */
  thinking?: ThinkingLevel;
  /** pi's words or Claude Code's (translated for pi). */
  tools?: string[];
  requireExt: string[];
  /** The envelope's JSON Schema; it must have `status` and `changed_files`. */
  schema: JsonSchema;
  /** The agent's environment (vault mode applied). */
  env: Env;
  profile?: string[];
  /** Per turn: aborted and judged "timeout" after this. */
  turnTimeoutMs?: number;
  /** Per turn (pi's RPC arms, opencode's --serve sessions): the wrap-up told this long before the turn's timeout (--grace). */
  turnGraceMs?: number;
  /** Per turn: aborted and judged "stalled" after this long without output. */
  stallMs?: number;
  /** Loop detection per turn (null: off). */
  loopRepeat?: number | null;
  /** The token budget per turn, as for a phase. */
  budget?: BudgetOptions | null;
  /** Per RPC command (default 30 s). */
  commandTimeoutMs?: number;
  /** Between TERM and KILL of a process group (pi, a gate). */
  graceMs?: number;
  maxLineBytes: number;
  /** A line for the human, on stderr. */
  say: (line: string) => void;
  /** Live progress of one turn ("prime", "arm 2"); closed when the turn ends. */
  view?: (label: string) => ProgressView;
  /** Ctrl-C: the running turns are aborted, their arms harvested, no new arm starts. */
  signal?: AbortSignal;
}

export interface ProgressView {
  sink: ProgressSink;
  close(): void;
}
