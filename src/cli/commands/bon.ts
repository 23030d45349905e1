// `agentport bon SPEC`: best-of-N by clone (src/bon/). The flags become a
// BonInput, resolveBonOptions checks them and resolves the agent (pi, or
// opencode one-shot or with --serve), and runBon runs the
// batch; its BonResult becomes the exit code (src/bon/result.ts). A project
// config plugs in between: fill a BonInput from it, let the flags given
// override it, and call resolveBonOptions — nothing else changes.
import { defineCommand } from "citty";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { route } from "../../agents/pi-argv.ts";
import { DEMO_SPEC } from "../../bon/briefs.ts";
import { BonSetupError, runBon } from "../../bon/batch.ts";
import { dryRun } from "../../bon/dry.ts";
import { table } from "../../bon/harvest.ts";
import { exitCodeOf } from "../../bon/result.ts";
import { DEFAULT_ARMS, DEFAULT_GATE_TIMEOUT_MS, DEFAULT_SPEC_DIR, DEMO_SPEC_NAME, MAX_ARMS, MIN_ARMS, type BonOptions } from "../../bon/options.ts";
import { defaultEnvelopeJsonSchema, type JsonSchema } from "../../core/envelope.ts";
import { EXIT } from "../../core/verdict.ts";
import { secrets } from "../../core/redact.ts";
import { agentArgs, agentSetup, folder, projectConfig, rosterArgs, setupLedger, type AgentSetup } from "../agent-options.ts";
import { commandLine } from "../flags.ts";
import { sandboxFor, sandboxOf } from "../isolation.ts";
import { probeSandbox, type Sandbox } from "../../io/sandbox.ts";
import { adapterOf, agentBinary } from "../../agents/table.ts";
import type { LoadedConfig } from "../../config/load.ts";
import { list, positiveInt, repeated, seconds } from "../common.ts";
import { environmentError, usageError } from "../errors.ts";
import { interruptSignal } from "../interrupt.ts";
import { log, setVerbosity, writeResult, type Verbosity } from "../output.ts";
import { writeStderr } from "../fd-out.ts";
import { progressView, PROGRESS_MODES, type ProgressMode } from "../progress-view.ts";

type Args = Record<string, unknown>;

/** What a batch is asked, before it is checked: the agent's settings resolved once (flags, environment, project config). */
export interface BonInput {
  /** The agent (pi or opencode), as `run --agent` resolves it (with opencode, `serve`: one server for the batch). */
  agent: AgentSetup;
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

/** The agent settings a batch does not apply: not flags of bon (but `--` arguments); from agentport.json, said and ignored. */
const UNUSED_BY_BON = ["linger", "claude-bin", "nudges", "permission-mode", "fail-on-refusal", "max-turns", "max-cost", "append-system-prompt", "pass-through", "grace"] as const;

/** The agents' flags bon applies: --help lists only these, and any other is an unknown option. */
const NOT_BON_FLAGS: readonly string[] = [...UNUSED_BY_BON, "codex-bin", "gemini-bin"];
const bonAgentArgs = Object.fromEntries(Object.entries(agentArgs).filter(([name]) => !NOT_BON_FLAGS.includes(name))) as typeof agentArgs;

/** The batch's envelope: --schema FILE (it must have status and changed_files), else the default. */
function bonSchema(agent: AgentSetup): JsonSchema {
  const schema = agent.schema ?? defaultEnvelopeJsonSchema();
  const properties = (schema.properties ?? {}) as Record<string, unknown>;
  const missing = ["status", "changed_files"].filter((k) => !(k in properties));
  if (missing.length > 0) throw usageError(`--schema: a bon envelope needs ${missing.join(" and ")} (the arm's status and the files it changed)`);
  return schema;
}

function viewFactory(progress: string | undefined, verbosity: Verbosity, parallel: boolean, agent: string) {
  const asked = progress !== undefined && (PROGRESS_MODES as readonly string[]).includes(progress) ? (progress as ProgressMode) : "auto";
  // Several arms at once cannot share one status line.
  const mode: ProgressMode = verbosity === "quiet" ? "off" : asked === "auto" && parallel ? "lines" : asked;
  return (label: string) => progressView(mode, `${agent} ${label}`);
}

/** The agents a batch can run. */
export const BON_AGENTS = ["pi", "opencode"] as const;

/** Check the input, resolve the agent and its environment: options a batch can run with. */
export function resolveBonOptions(input: BonInput, verbosity: Verbosity = "normal", signal?: AbortSignal): BonOptions {
  const { agent } = input;
  const { common, pi } = agent;
  const cwd = common.cwd;
  const kind = agent.agent;
  if (kind !== "pi" && kind !== "opencode") throw usageError(`bon runs ${BON_AGENTS.join(" or ")}, not ${kind}`);
  // opencode names its models itself (provider/model); pi's become routes.
  const toRoute = (m: string) => (kind === "pi" ? route(m, pi.gateway, pi.direct) : m);
  const models = input.models?.map((m) => m.trim()).filter(Boolean);
  if (models !== undefined && models.length > 0 && input.arms !== undefined && input.arms !== models.length) {
    throw usageError(`--arms ${input.arms} and --models with ${models.length} models disagree: --models sets one model per arm`);
  }
  const arms = models !== undefined && models.length > 0 ? models.length : (input.arms ?? DEFAULT_ARMS);
  if (arms < MIN_ARMS || arms > MAX_ARMS) throw usageError(`a batch has ${MIN_ARMS} to ${MAX_ARMS} arms, not ${arms}: past that the harvest is no longer readable`);
  const model = agent.model ? toRoute(agent.model) : null;
  const routes = models !== undefined && models.length > 0 ? models.map(toRoute) : Array.from({ length: arms }, () => model);
  if (input.jobs !== undefined && !input.parallel) throw usageError("--jobs needs --parallel (in one tree the arms run one after the other)");
  const jobs = input.jobs ?? arms;
  for (const key of UNUSED_BY_BON) {
    if (agent.sources[key] === "flag" || agent.sources[key] === "file") log.warn(`--${key} is not applied by bon: ignored`);
  }
  const bin = agentBinary(adapterOf(kind), agent.args);
  const say = (line: string) => {
    if (verbosity !== "quiet") writeStderr(`${secrets.text(line)}\n`); // a gate's or git's words may carry a secret
  };
  return {
    cwd,
    spec: resolve(cwd, input.spec),
    specDir: resolve(cwd, input.specDir ?? DEFAULT_SPEC_DIR),
    models: routes,
    primeModel: model ?? routes[0] ?? null,
    gates: input.gates,
    gateTimeoutMs: input.gateTimeoutMs ?? DEFAULT_GATE_TIMEOUT_MS,
    setup: input.setup,
    copy: input.copy.map((p) => resolve(cwd, p)),
    parallel: input.parallel,
    jobs,
    apply: input.apply,
    sandbox: bonSandbox(agent, say),
    agent: kind,
    serve: agent.settings.serve,
    bin,
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
    stallMs: common.supervision.stallMs,
    loopRepeat: common.supervision.loopRepeat,
    budget: common.supervision.budget,
    maxLineBytes: common.maxLineBytes,
    say,
    view: viewFactory(input.progress, verbosity, input.parallel, kind),
    signal,
  };
}

/**
 * The arms isolated where bwrap works (the checkout read-only to them); where
 * it does not, said in one line and run as before. --isolate insists (exit 5
 * without bwrap), --no-isolate opts out.
 */
function bonSandbox(agent: AgentSetup, say: (line: string) => void): Sandbox | null {
  const { isolate, network } = agent.settings;
  if (isolate === false) return null;
  const input = { agent: agent.agent, env: agent.common.env, home: agent.common.home, network, writable: agent.agent === "pi" ? [agent.pi.sessionDir] : [] };
  if (isolate === true) return sandboxFor(input);
  const probe = probeSandbox();
  if (probe.ok) return sandboxOf(input);
  say(`bon: the arms are NOT isolated: ${probe.reason}; ${probe.fix} (--no-isolate to say you know)`);
  return null;
}

/** The config's named gates as shell commands; an argv array is quoted word by word. */
function configGates(config: LoadedConfig | null): string[] {
  const quote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
  return Object.values(config?.config.gates ?? {}).map((gate) => (Array.isArray(gate) ? gate.map(quote).join(" ") : gate));
}

async function dry(json: boolean): Promise<number> {
  const outcome = dryRun();
  writeStderr(`${table(outcome.ranked)}\n\n`);
  for (const c of outcome.checks) writeStderr(`${c.ok ? "ok  " : "FAIL"} ${c.name}\n`);
  writeStderr(outcome.ok ? "bon --dry-run: the ranking holds on a fictional batch (zero tokens)\n" : "bon --dry-run: the ranking is broken\n");
  if (json) await writeResult(JSON.stringify({ ok: outcome.ok, checks: outcome.checks, ranked: outcome.ranked }));
  return outcome.ok ? EXIT.ok : EXIT.failed;
}

async function demo(args: Args, specDir: string | undefined): Promise<number> {
  const cwd = folder(typeof args.cwd === "string" ? args.cwd : undefined);
  const file = join(resolve(cwd, specDir ?? DEFAULT_SPEC_DIR), DEMO_SPEC_NAME);
  const shown = relative(process.cwd(), file) || file;
  if (existsSync(file) && readFileSync(file, "utf8") !== DEMO_SPEC) throw usageError(`${shown} exists and differs from the demo spec: not overwritten`);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, DEMO_SPEC);
  writeStderr(`bon: demo spec written — try it (untracked files under the spec folder are tolerated):\n  agentport bon ${shown} --arms 3 --gate "bun test src/word-count.test.ts"\n`);
  await writeResult(file);
  return EXIT.ok;
}

export const bonCommand = defineCommand({
  meta: {
    name: "bon",
    description:
      "Best-of-N by clone: one prime (a reading turn of pi, or of opencode) paid once, N arms cloned from it, each in a workspace agentport owns (a clone of HEAD in the run folder), judged by its gates, its patch harvested, the arms ranked (green, then cheapest, then fastest) into harvest.json; your checkout changes only with --apply. The agent runs under bwrap where it works (your checkout read-only to it; --no-isolate opts out, --isolate insists); a change to your checkout during the batch is named and exits 6",
  },
  args: {
    spec: { type: "positional", required: false, description: "The spec to implement (a file; untracked files under --spec-dir are tolerated)" },
    arms: { type: "string", valueHint: "N", description: `How many arms, ${MIN_ARMS} to ${MAX_ARMS} (default ${DEFAULT_ARMS})` },
    models: { type: "string", valueHint: "a,b,c", description: "One model per arm (sets the number of arms); the prime runs on --model, else the first" },
    gate: { type: "string", valueHint: "CMD", description: "A gate command (sh -c, in the arm's folder) that must exit 0; repeat for several" },
    "gate-timeout": { type: "string", valueHint: "S", description: `Stop a gate after S seconds (red; default ${DEFAULT_GATE_TIMEOUT_MS / 1000})` },
    "spec-dir": { type: "string", valueHint: "DIR", description: `The spec folder: its untracked files are tolerated, copied into each workspace, never harvested (default ${DEFAULT_SPEC_DIR})` },
    setup: { type: "string", valueHint: "CMD", description: "Run CMD (sh -c) once in each workspace before its arm, with the gates' limits; repeat for several (bon.setup in agentport.json)" },
    copy: { type: "string", valueHint: "PATH", description: "Copy an ignored PATH (e.g. node_modules) into each workspace, copy-on-write where the filesystem allows; repeat for several (bon.copy)" },
    parallel: { type: "boolean", description: "Each arm in a workspace of its own (pi --fork of the prime, or a copy of opencode's), several at once" },
    agent: { type: "enum", options: [...BON_AGENTS], description: "The agent: pi (default, over its RPC mode) or opencode (a process per session)" },
    jobs: { type: "string", valueHint: "J", description: "With --parallel: at most J arms at once (default: all)" },
    apply: { type: "boolean", description: "Apply the winner's patch to your checkout (git apply --index); without it your checkout is never written" },
    "dry-run": { type: "boolean", alias: ["dry"], description: "Prove the ranking on a fictional batch: zero tokens, no pi, no git" },
    demo: { type: "boolean", description: `Write a small demo spec to <spec-dir>/${DEMO_SPEC_NAME} and exit` },
    ...bonAgentArgs,
    as: rosterArgs.as,
    config: rosterArgs.config,
    json: { type: "boolean", description: "Print harvest.json on stdout instead of the winner's git apply command" },
  },
  async run({ args, rawArgs }) {
    const verbosity = setVerbosity(args);
    const specDir = typeof args["spec-dir"] === "string" ? args["spec-dir"] : undefined;
    if (args["dry-run"]) return await dry(Boolean(args.json));
    if (args.demo) return await demo(args, specDir);
    if (typeof args.spec !== "string" || args.spec === "") throw usageError("a spec is needed: agentport bon specs/my-spec.md (or --demo to write one, --dry-run to prove the ranking)");
    // The project config: `--as NAME` fills the agent's options (flags win);
    // its gates and spec folder apply when the flags give none.
    const cwd = folder(typeof args.cwd === "string" ? args.cwd : undefined);
    const line = commandLine(args, rawArgs);
    const agent = agentSetup({ flags: line.flags, passThrough: line.passThrough }, cwd, { agent: args.agent === "opencode" ? "opencode" : "pi", config: await projectConfig(args, cwd) });
    const config = agent.config;
    const base = config === null ? cwd : dirname(config.path);
    const flagGates = repeated(rawArgs, "gate");
    const flagSetup = repeated(rawArgs, "setup");
    const flagCopy = repeated(rawArgs, "copy");
    const input: BonInput = {
      agent,
      progress: typeof args.progress === "string" ? args.progress : undefined,
      spec: args.spec,
      arms: positiveInt("arms", args.arms),
      models: list(args.models),
      gates: flagGates.length > 0 ? flagGates : configGates(config),
      gateTimeoutMs: seconds("gate-timeout", args["gate-timeout"]),
      specDir: specDir ?? (config?.config.spec_folder === undefined ? undefined : resolve(base, config.config.spec_folder)),
      setup: flagSetup.length > 0 ? flagSetup : (config?.config.bon?.setup ?? []),
      copy: flagCopy.length > 0 ? flagCopy : (config?.config.bon?.copy ?? []).map((p) => resolve(base, p)),
      parallel: Boolean(args.parallel),
      jobs: positiveInt("jobs", args.jobs),
      apply: Boolean(args.apply),
    };
    const options = resolveBonOptions(input, verbosity, interruptSignal());
    let result;
    try {
      result = await runBon(options);
    } catch (error) {
      if (error instanceof BonSetupError) throw environmentError(error.message);
      throw error;
    }
    if (result.kind === "refused") {
      const { reason, dirty } = result.refused;
      const shown = dirty.slice(0, 20).map((d) => `  ${d}`);
      if (dirty.length > 20) shown.push(`  … and ${dirty.length - 20} more`);
      log.error(`bon: refused (zero tokens, nothing written): ${reason}${shown.length > 0 ? `\n${shown.join("\n")}` : ""}`);
      if (args.json) await writeResult(JSON.stringify({ refused: true, reason, dirty }));
    } else if (args.json) await writeResult(JSON.stringify(result.harvest, null, 2));
    else if (result.harvest.winner !== null) await writeResult(result.applied?.ok ? result.harvest.winner.patch : result.harvest.winner.apply);
    return exitCodeOf(result);
  },
});
