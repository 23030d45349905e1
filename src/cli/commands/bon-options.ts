// What `agentport bon` is asked, checked and resolved into BonOptions: the
// arms (a count, `--models`, or `--arms pi,claude:MODEL,…` one agent per arm),
// each arm agent's settings as `run` resolves them, the sandbox, the envelope.
import { resolve } from "node:path";
import { adapterOf, agentBinary } from "../../agents/table.ts";
import type { AgentSetup } from "../../agents/setup.ts";
import { DEFAULT_ARMS, DEFAULT_GATE_TIMEOUT_MS, DEFAULT_SPEC_DIR, MAX_ARMS, MIN_ARMS, type BonOptions } from "../../bon/options.ts";
import { BON_AGENTS, isBonAgent, type BonAgentName } from "../../bon/names.ts";
import { defaultEnvelopeJsonSchema, type JsonSchema } from "../../core/envelope.ts";
import { secrets } from "../../core/redact.ts";
import { probeSandbox, type Sandbox } from "../../io/sandbox.ts";
import { setupLedger } from "../agent-options.ts";
import { usageError } from "../errors.ts";
import { sandboxFor, sandboxOf } from "../isolation.ts";
import { log, type Verbosity } from "../output.ts";
import { writeStderr } from "../fd-out.ts";
import { progressView, PROGRESS_MODES, type ProgressMode } from "../progress-view.ts";

/** One arm of an agent list: its agent, and its model when named (`agent:model`). */
export interface ArmSpec {
  agent: BonAgentName;
  model: string | null;
}

/** What a batch is asked, before it is checked: each arm agent's settings resolved once (flags, environment, project config). */
export interface BonInput {
  /** The batch's agent (pi, or another with --agent), as `run --agent` resolves it; with an agent list, the first arm's. */
  agent: AgentSetup;
  /** With an agent list (`--arms pi,claude`): one arm each, and every arm agent's settings. */
  list?: { arms: ArmSpec[]; setups: Partial<Record<BonAgentName, AgentSetup>> };
  /** --progress as given. */
  progress?: string;
  spec: string;
  arms?: number;
  /** One model per arm (ids; turned into routes with the gateway unless `direct`). */
  models?: string[];
  gates: string[];
  gateTimeoutMs?: number;
  /** Relative to the agent's folder. */
  specDir?: string;
  /** Run once in each workspace before its arm. */
  setup: string[];
  /** Ignored paths copied into each workspace (relative to the agent's folder, or absolute). */
  copy: string[];
  parallel: boolean;
  jobs?: number;
  apply: boolean;
}

/** `--arms`: a count, or one agent (or `agent:model`) per arm; anything else is a usage error naming it. */
export function parseArms(value: unknown): { count: number } | { list: ArmSpec[] } | undefined {
  if (value === undefined || value === "") return undefined;
  const text = String(value).trim();
  const fix = `give a count (--arms 3) or one agent per arm (--arms pi,claude:MODEL,codex; agents: ${BON_AGENTS.join(", ")})`;
  if (/^\d+$/.test(text)) {
    const count = Number(text);
    if (count <= 0) throw usageError(`--arms must be a positive count, got "${text}": ${fix}`);
    return { count };
  }
  const list = text.split(",").map((entry) => {
    const item = entry.trim();
    const colon = item.indexOf(":");
    const agent = colon < 0 ? item : item.slice(0, colon);
    const model = colon < 0 ? null : item.slice(colon + 1).trim();
    if (!isBonAgent(agent) || model === "") throw usageError(`--arms: "${item}" is not an agent or agent:model: ${fix}`);
    return { agent, model };
  });
  return { list };
}

/** The agents' settings bon's own sessions (pi's RPC mode, opencode's) do not apply; `run`'s path applies them. */
const UNUSED_BY_SESSIONS = [
  "linger",
  "nudges",
  "permission-mode",
  "permissions",
  "fail-on-refusal",
  "max-turns",
  "max-cost",
  "append-system-prompt",
  "pass-through",
] as const;

/** The batch's envelope: --schema FILE (it must have status and changed_files), else the default. */
function bonSchema(agent: AgentSetup): JsonSchema {
  const schema = agent.schema ?? defaultEnvelopeJsonSchema();
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const missing = ["status", "changed_files"].filter((k) => !(k in properties));
  if (missing.length > 0)
    throw usageError(`--schema: a bon envelope needs ${missing.join(" and ")} (the arm's status and the files it changed)`);
  return schema;
}

function viewFactory(progress: string | undefined, verbosity: Verbosity, parallel: boolean) {
  const asked = progress !== undefined && (PROGRESS_MODES as readonly string[]).includes(progress) ? (progress as ProgressMode) : "auto";
  // Several arms at once cannot share one status line.
  const mode: ProgressMode = verbosity === "quiet" ? "off" : asked === "auto" && parallel ? "lines" : asked;
  return (label: string) => progressView(mode, label);
}

/** The arms: one per model, one per agent of a list, or `--arms N` of the batch's agent on its model. */
function armsOf(input: BonInput, kind: BonAgentName): ArmSpec[] {
  const models = input.models?.map((m) => m.trim()).filter(Boolean);
  if (input.list !== undefined) return input.list.arms;
  if (models !== undefined && models.length > 0 && input.arms !== undefined && input.arms !== models.length) {
    throw usageError(`--arms ${input.arms} and --models with ${models.length} models disagree: --models sets one model per arm`);
  }
  if (models !== undefined && models.length > 0) return models.map((model) => ({ agent: kind, model }));
  return Array.from({ length: input.arms ?? DEFAULT_ARMS }, () => ({ agent: kind, model: null }));
}

/** Check the input, resolve the agents and their environment: options a batch can run with. */
export function resolveBonOptions(input: BonInput, verbosity: Verbosity = "normal", signal?: AbortSignal): BonOptions {
  const { agent } = input;
  const { common, pi } = agent;
  const cwd = common.cwd;
  if (!isBonAgent(agent.agent)) throw usageError(`bon runs ${BON_AGENTS.join(", ")}, not ${agent.agent}`);
  const arms = armsOf(input, agent.agent);
  if (arms.length < MIN_ARMS || arms.length > MAX_ARMS)
    throw usageError(`a batch has ${MIN_ARMS} to ${MAX_ARMS} arms, not ${arms.length}: past that the harvest is no longer readable`);
  const agents = [...new Set(arms.map((a) => a.agent))];
  const kind: BonAgentName | null = agents.length === 1 ? agents[0]! : null;
  const setups: Partial<Record<BonAgentName, AgentSetup>> = input.list?.setups ?? { [agent.agent]: agent };
  // An agent whose model is a route (pi) takes routes; every other arm takes the model in the roster's words, as `run` does.
  const modelRoute = kind === null ? undefined : adapterOf(kind).modelRoute;
  const toModel = (m: string) => (modelRoute === undefined ? m : modelRoute(m, agent.settings));
  const model = input.list === undefined && agent.model ? toModel(agent.model) : null;
  const models = arms.map((a) => (a.model !== null ? toModel(a.model) : model));
  if (input.jobs !== undefined && !input.parallel)
    throw usageError("--jobs needs --parallel (in one tree the arms run one after the other)");
  if (kind !== null && adapterOf(kind).bon?.ownSessions === true) {
    for (const key of UNUSED_BY_SESSIONS) {
      if (agent.sources[key] === "flag" || agent.sources[key] === "file")
        log.warn(`--${key} is not applied by bon's ${kind} sessions: ignored`);
    }
  }
  const bins = Object.fromEntries(agents.map((name) => [name, agentBinary(adapterOf(name), setups[name]!.args)])) as Partial<
    Record<BonAgentName, string>
  >;
  const say = (line: string) => {
    if (verbosity !== "quiet") writeStderr(`${secrets.text(line)}\n`); // a gate's or git's words may carry a secret
  };
  return {
    cwd,
    spec: resolve(cwd, input.spec),
    specDir: resolve(cwd, input.specDir ?? DEFAULT_SPEC_DIR),
    models,
    agents: arms.map((a) => a.agent),
    primeModel: model ?? models[0] ?? null,
    gates: input.gates,
    gateTimeoutMs: input.gateTimeoutMs ?? DEFAULT_GATE_TIMEOUT_MS,
    setup: input.setup,
    copy: input.copy.map((p) => resolve(cwd, p)),
    parallel: input.parallel,
    jobs: input.jobs ?? arms.length,
    apply: input.apply,
    sandbox: bonSandbox(
      agent,
      agents.map((name) => setups[name]!),
      say,
    ),
    agent: kind,
    setups,
    bins,
    serve: agent.settings.serve,
    bin: bins[kind ?? agent.agent]!,
    home: common.home,
    ledger: setupLedger(agent).location,
    sessionDir: pi.sessionDir,
    thinking: pi.thinking,
    tools: pi.tools,
    requireExt: pi.requireExt,
    schema: bonSchema(agent),
    env: common.env,
    profile: common.profile,
    turnTimeoutMs: common.supervision.timeoutMs,
    turnGraceMs: common.supervision.graceMs,
    stallMs: common.supervision.stallMs,
    loopRepeat: common.supervision.loopRepeat,
    budget: common.supervision.budget,
    maxLineBytes: common.maxLineBytes,
    say,
    view: viewFactory(input.progress, verbosity, input.parallel),
    signal,
  };
}

/**
 * The arms isolated where bwrap works (the checkout read-only to them; each
 * arm agent's state writable); where it does not, said in one line and run as
 * before. --isolate insists (exit 5 without bwrap), --no-isolate opts out.
 */
function bonSandbox(agent: AgentSetup, setups: AgentSetup[], say: (line: string) => void): Sandbox | null {
  const { isolate, network } = agent.settings;
  if (isolate === false) return null;
  const inputs = setups.map((s) => ({
    agent: s.agent,
    env: s.common.env,
    home: s.common.home,
    network,
    writable: [],
    sessionDir: s.pi.sessionDir,
  }));
  const union = (boxes: Sandbox[]): Sandbox => ({
    network,
    writable: [...new Set(boxes.flatMap((b) => b.writable))],
    readable: [...new Set(boxes.flatMap((b) => b.readable))],
  });
  if (isolate === true) return union(inputs.map((i) => sandboxFor(i)));
  const probe = probeSandbox();
  if (probe.ok) return union(inputs.map(sandboxOf));
  say(`bon: the arms are NOT isolated: ${probe.reason}; ${probe.fix} (--no-isolate to say you know)`);
  return null;
}
