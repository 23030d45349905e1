import { defineCommand } from "citty";
import type { RunOutcome } from "../../agents/phase.ts";
import { AGENT_NAMES, adapterOf, agentBinary } from "../../agents/table.ts";
import type { Ledger } from "../../io/ledger.ts";
import {
  agentArgs,
  agentSetup,
  promptArgs,
  projectConfig,
  rosterArgs,
  folder,
  openLedger,
  setupLedger,
  type AgentSetup,
} from "../agent-options.ts";
import { commandLine } from "../flags.ts";
import { isolateSetup } from "../isolation.ts";
import { readPrompt } from "../prompt.ts";
import { reportRun, resumeHint } from "../verdict-output.ts";
import { resumeSession, showAxes } from "./resume.ts";
import type { AgentName } from "../../core/agents.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { progressMode, setVerbosity } from "../output.ts";
import { interruptSignal } from "../interrupt.ts";
import type { ProgressSink } from "../../core/progress.ts";

/** `run`'s flags (a fleet worker parses a task's request with them too). */
export const runArgs = {
  ...promptArgs,
  agent: { type: "enum" as const, options: [...AGENT_NAMES], description: "Which agent to run (default: the named agent's, else claude)" },
  continue: {
    type: "boolean" as const,
    alias: "c",
    description: "Continue the latest session born in this folder on this host (of --agent, else of any agent): a resume of it",
  },
  ...rosterArgs,
  ...agentArgs,
};

export const runCommand = defineCommand({
  meta: {
    name: "run",
    description:
      "Run a headless coding agent once: the session is declared in the ledger first, live progress goes to stderr, the final text (or --json verdict) to stdout; arguments after -- go to the agent verbatim",
  },
  args: runArgs,
  async run({ args, rawArgs }) {
    if (args.continue) return resumeSession(args, rawArgs, { agent: args.agent as AgentName | undefined });
    const verbosity = setVerbosity(args);
    const cwd = folder(args.cwd);
    const line = commandLine(args, rawArgs);
    const setup = agentSetup({ flags: line.flags, passThrough: line.passThrough }, cwd, {
      useDefault: true,
      config: await projectConfig(args, cwd),
    });
    const bin = agentBin(setup);
    isolateSetup(setup);
    const prompt = await readPrompt(line.words, args.prompt);
    const mode: ProgressMode = progressMode<ProgressMode>(args.progress, verbosity, "auto");
    await using ledger = await openLedger(setupLedger(setup));
    const view = progressView(mode, setup.agent, setup.model);
    return await reportRun(
      () => runSetup(ledger, setup, { bin, prompt, progress: view.sink, signal: interruptSignal() }),
      Boolean(args.json),
      view,
      resumeHint(args, cwd),
    );
  },
});

/** The agent's binary: --<agent>-bin, else the environment, else PATH. */
export function agentBin(setup: AgentSetup): string {
  return agentBinary(adapterOf(setup.agent), setup.args);
}

/** One new session of a resolved agent: what `run` does after parsing, for other commands (bon) too. */
export function runSetup(
  ledger: Ledger,
  setup: AgentSetup,
  turn: { bin: string; prompt: string; progress?: ProgressSink; signal?: AbortSignal },
): Promise<RunOutcome> {
  showAxes(setup);
  return adapterOf(setup.agent).run(ledger, setup, turn);
}
