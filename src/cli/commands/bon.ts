// `agentport bon SPEC`: best-of-N (src/bon/). The flags become a BonInput,
// resolveBonOptions (bon-options.ts) checks them and resolves the agents (pi,
// opencode one-shot or with --serve, any agent through `run`'s path, or one
// agent per arm), and runBon runs the batch; its BonResult becomes the exit
// code (src/bon/result.ts).
import { defineCommand } from "citty";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { DEMO_SPEC } from "../../bon/briefs.ts";
import { BonSetupError, runBon } from "../../bon/batch.ts";
import { dryRun } from "../../bon/dry.ts";
import { table } from "../../bon/harvest.ts";
import { exitCodeOf } from "../../bon/result.ts";
import { DEFAULT_ARMS, DEFAULT_GATE_TIMEOUT_MS, DEFAULT_SPEC_DIR, DEMO_SPEC_NAME, MAX_ARMS, MIN_ARMS } from "../../bon/options.ts";
import { BON_AGENTS, isBonAgent, type BonAgentName } from "../../bon/names.ts";
import { bonRow } from "../../bon/settings.ts";
import { EXIT } from "../../core/verdict.ts";
import { agentArgs, agentSetup, folder, projectConfig, rosterArgs, type AgentSetup, type SetupInput } from "../agent-options.ts";
import { commandLine } from "../flags.ts";
import type { LoadedConfig } from "../../config/load.ts";
import { list, positiveInt, repeated, seconds } from "../common.ts";
import { environmentError, usageError } from "../errors.ts";
import { interruptSignal } from "../interrupt.ts";
import { log, setVerbosity, writeResult } from "../output.ts";
import { writeStderr } from "../fd-out.ts";
import { parseArms, resolveBonOptions, type ArmSpec, type BonInput } from "./bon-options.ts";

type Args = Record<string, unknown>;

/** The agents' flags bon takes: every one `run` takes but acp's command. */
const NOT_BON_FLAGS: readonly string[] = ["acp-command"];
const bonAgentArgs = Object.fromEntries(Object.entries(agentArgs).filter(([name]) => !NOT_BON_FLAGS.includes(name))) as typeof agentArgs;

/** Each arm agent's settings, as `run --agent X` resolves them (refused before anything starts when X cannot take one). */
function armSetups(
  args: Args,
  input: SetupInput,
  cwd: string,
  config: LoadedConfig | null,
  list: ArmSpec[],
): { agent: AgentSetup; setups: Partial<Record<BonAgentName, AgentSetup>> } {
  if (args.agent !== undefined) throw usageError("--arms names each arm's agent: leave out --agent");
  if (args.as !== undefined) throw usageError("--as names one agent: with --arms pi,claude,… give each arm its agent (and agent:model)");
  if (args.models !== undefined) throw usageError("--arms names each arm's model (agent:model): leave out --models");
  if (args.model !== undefined) throw usageError("--model is one agent's: with --arms give each arm its model as agent:model");
  const setups: Partial<Record<BonAgentName, AgentSetup>> = {};
  const agents = new Set(list.map((a) => a.agent));
  const batch = agents.size === 1 ? list[0]!.agent : null;
  for (const { agent } of list) setups[agent] ??= agentSetup(input, cwd, { agent, config, rowOf: (a) => bonRow(batch, a) });
  return { agent: setups[list[0]!.agent]!, setups };
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
  writeStderr(
    outcome.ok ? "bon --dry-run: the ranking holds on a fictional batch (zero tokens)\n" : "bon --dry-run: the ranking is broken\n",
  );
  if (json) await writeResult(JSON.stringify({ ok: outcome.ok, checks: outcome.checks, ranked: outcome.ranked }));
  return outcome.ok ? EXIT.ok : EXIT.failed;
}

async function demo(args: Args, specDir: string | undefined): Promise<number> {
  const cwd = folder(typeof args.cwd === "string" ? args.cwd : undefined);
  const file = join(resolve(cwd, specDir ?? DEFAULT_SPEC_DIR), DEMO_SPEC_NAME);
  const shown = relative(process.cwd(), file) || file;
  if (existsSync(file) && readFileSync(file, "utf8") !== DEMO_SPEC)
    throw usageError(`${shown} exists and differs from the demo spec: not overwritten`);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, DEMO_SPEC);
  writeStderr(
    `bon: demo spec written — try it (untracked files under the spec folder are tolerated):\n  agentport bon ${shown} --arms 3 --gate "bun test src/word-count.test.ts"\n`,
  );
  await writeResult(file);
  return EXIT.ok;
}

export const bonCommand = defineCommand({
  meta: {
    name: "bon",
    description:
      "Best-of-N: one prime (a reading turn of pi, or of opencode) paid once and N arms cloned or forked from it (claude, codex, gemini and cross-agent batches: each arm from the spec), each in a workspace agentport owns (a clone of HEAD in the run folder), judged by its gates, its patch harvested, the arms ranked (green, then cheapest, then fastest) into harvest.json; your checkout changes only with --apply. The agent runs under bwrap where it works (your checkout read-only to it; --no-isolate opts out, --isolate insists); a change to your checkout during the batch is named and exits 6",
  },
  args: {
    spec: {
      type: "positional",
      required: false,
      description: "The spec to implement (a file; untracked files under --spec-dir are tolerated)",
    },
    arms: {
      type: "string",
      valueHint: "N|a,b",
      description: `How many arms, ${MIN_ARMS} to ${MAX_ARMS} (default ${DEFAULT_ARMS}); or one agent per arm, a cross-agent batch: pi,claude:MODEL,codex (each arm from the spec)`,
    },
    models: {
      type: "string",
      valueHint: "a,b,c",
      description: "One model per arm (sets the number of arms); the prime runs on --model, else the first",
    },
    gate: {
      type: "string",
      valueHint: "CMD",
      description: "A gate command (sh -c, in the arm's folder) that must exit 0; repeat for several",
    },
    "gate-timeout": {
      type: "string",
      valueHint: "S",
      description: `Stop a gate after S seconds (red; default ${DEFAULT_GATE_TIMEOUT_MS / 1000})`,
    },
    "spec-dir": {
      type: "string",
      valueHint: "DIR",
      description: `The spec folder: its untracked files are tolerated, copied into each workspace, never harvested (default ${DEFAULT_SPEC_DIR})`,
    },
    setup: {
      type: "string",
      valueHint: "CMD",
      description:
        "Run CMD (sh -c) once in each workspace before its arm, with the gates' limits; repeat for several (bon.setup in agentport.json)",
    },
    copy: {
      type: "string",
      valueHint: "PATH",
      description:
        "Copy an ignored PATH (e.g. node_modules) into each workspace, copy-on-write where the filesystem allows; repeat for several (bon.copy)",
    },
    parallel: {
      type: "boolean",
      description: "Each arm in a workspace of its own (pi --fork of the prime, or a copy of opencode's), several at once",
    },
    agent: {
      type: "enum",
      options: [...BON_AGENTS],
      description:
        "The agent: pi (default; over its RPC mode, arms cloned from the prime), opencode (arms forked from the prime), claude, codex or gemini (through `run`'s path, each arm from the spec)",
    },
    jobs: { type: "string", valueHint: "J", description: "With --parallel: at most J arms at once (default: all)" },
    apply: {
      type: "boolean",
      description: "Apply the winner's patch to your checkout (git apply --index); without it your checkout is never written",
    },
    "dry-run": { type: "boolean", alias: ["dry"], description: "Prove the ranking on a fictional batch: zero tokens, no pi, no git" },
    demo: { type: "boolean", description: `Write a small demo spec to <spec-dir>/${DEMO_SPEC_NAME} and exit` },
    ...bonAgentArgs,
    as: rosterArgs.as,
    config: rosterArgs.config,
    nudges: rosterArgs.nudges,
    json: { type: "boolean", description: "Print harvest.json on stdout instead of the winner's git apply command" },
  },
  async run({ args, rawArgs }) {
    const verbosity = setVerbosity(args);
    const specDir = typeof args["spec-dir"] === "string" ? args["spec-dir"] : undefined;
    if (args["dry-run"]) return await dry(Boolean(args.json));
    if (args.demo) return await demo(args, specDir);
    if (typeof args.spec !== "string" || args.spec === "")
      throw usageError("a spec is needed: agentport bon specs/my-spec.md (or --demo to write one, --dry-run to prove the ranking)");
    // The project config: `--as NAME` fills the agent's options (flags win);
    // its gates and spec folder apply when the flags give none.
    const cwd = folder(typeof args.cwd === "string" ? args.cwd : undefined);
    const line = commandLine(args, rawArgs);
    const setupInput = { flags: line.flags, passThrough: line.passThrough };
    const loaded = await projectConfig(args, cwd);
    const arms = parseArms(args.arms);
    const listed = arms !== undefined && "list" in arms ? armSetups(args, setupInput, cwd, loaded, arms.list) : null;
    // bon's agent is pi unless --agent (or --as NAME) says otherwise.
    const agent =
      listed?.agent ??
      agentSetup(setupInput, cwd, {
        agent: typeof args.agent === "string" ? (args.agent as BonAgentName) : args.as === undefined ? "pi" : undefined,
        config: loaded,
        // One agent for every arm: the batch's own sessions (pi's RPC, opencode's).
        rowOf: (a) => (isBonAgent(a) ? bonRow(a, a) : {}),
      });
    const config = agent.config;
    const base = config === null ? cwd : dirname(config.path);
    const flagGates = repeated(rawArgs, "gate");
    const flagSetup = repeated(rawArgs, "setup");
    const flagCopy = repeated(rawArgs, "copy");
    const input: BonInput = {
      agent,
      progress: typeof args.progress === "string" ? args.progress : undefined,
      spec: args.spec,
      arms: arms !== undefined && "count" in arms ? arms.count : undefined,
      list: listed === null || arms === undefined || !("list" in arms) ? undefined : { arms: arms.list, setups: listed.setups },
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
    let result: Awaited<ReturnType<typeof runBon>>;
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
    else if (result.harvest.winner !== null)
      await writeResult(result.applied?.ok ? result.harvest.winner.patch : result.harvest.winner.apply);
    return exitCodeOf(result);
  },
});
