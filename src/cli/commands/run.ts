import { defineCommand } from "citty";
import { runClaude } from "../../agents/claude-run.ts";
import { runPi } from "../../agents/pi-run.ts";
import type { RunOutcome } from "../../agents/phase.ts";
import type { Ledger } from "../../io/ledger.ts";
import { agentArgs, agentBinary, agentExtras, agentSetup, promptArgs, projectConfig, rosterArgs, folder, openLedger, piCapabilities, setupLedger, type AgentSetup } from "../agent-options.ts";
import { commandLine } from "../flags.ts";
import { readPrompt } from "../prompt.ts";
import { reportRun, showArgv } from "../verdict-output.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { setVerbosity } from "../output.ts";
import { interruptSignal } from "../interrupt.ts";
import type { ProgressSink } from "../../core/progress.ts";

export const runCommand = defineCommand({
  meta: {
    name: "run",
    description: "Run a headless coding agent once: the session is declared in the ledger first, live progress goes to stderr, the final text (or --json verdict) to stdout; arguments after -- go to the agent verbatim",
  },
  args: {
    ...promptArgs,
    agent: { type: "enum", options: ["claude", "pi"], description: "Which agent to run (default: the named agent's, else claude)" },
    ...rosterArgs,
    ...agentArgs,
  },
  async run({ args, rawArgs }) {
    const verbosity = setVerbosity(args);
    const cwd = folder(args.cwd);
    const line = commandLine(args, rawArgs);
    const setup = agentSetup({ flags: line.flags, passThrough: line.passThrough }, cwd, { useDefault: true, config: await projectConfig(args, cwd) });
    const prompt = await readPrompt(line.words, args.prompt);
    const bin = agentBinary(setup.agent, setup.settings, setup.sources);
    const mode: ProgressMode = verbosity === "quiet" ? "off" : ((args.progress as ProgressMode | undefined) ?? "auto");
    await using ledger = await openLedger(setupLedger(setup));
    const view = progressView(mode, setup.agent);
    return await reportRun(() => runSetup(ledger, setup, { bin, prompt, progress: view.sink, signal: interruptSignal() }), Boolean(args.json), view.close);
  },
});

/** One new session of a resolved agent, pi or claude: what `run` does after parsing, for other commands (bon) too. */
export async function runSetup(ledger: Ledger, setup: AgentSetup, turn: { bin: string; prompt: string; progress?: ProgressSink; signal?: AbortSignal }): Promise<RunOutcome> {
  const bin = turn.bin;
  const base = {
    ...setup.common,
    bin,
    prompt: turn.prompt,
    model: setup.model,
    tools: setup.tools,
    thinking: setup.thinking,
    schema: setup.schema,
    nudges: setup.nudges,
    appendSystemPrompt: setup.appendSystemPrompt,
    extras: agentExtras(setup),
    request: setup.request,
    onArgv: showArgv,
    progress: turn.progress,
    signal: turn.signal,
  };
  if (setup.agent === "pi") {
    const caps = await piCapabilities(bin, ledger, setup.common.env);
    return runPi(ledger, { ...base, ...setup.pi, caps });
  }
  return runClaude(ledger, base);
}
