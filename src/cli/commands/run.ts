import { defineCommand } from "citty";
import { runClaude } from "../../agents/claude-run.ts";
import { runPi } from "../../agents/pi-run.ts";
import type { RunOutcome } from "../../agents/phase.ts";
import { agentArgs, claudeBin, commonOptions, envelopeSchema, folder, openLedger, piBin, piCapabilities, piOptions } from "../agent-options.ts";
import { readPrompt } from "../prompt.ts";
import { printVerdict } from "../verdict-output.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { setVerbosity } from "../output.ts";
import { interruptSignal } from "../interrupt.ts";
import { list } from "../common.ts";

export const runCommand = defineCommand({
  meta: {
    name: "run",
    description: "Run a headless coding agent once: the session is declared in the ledger first, live progress goes to stderr, the final text (or --json verdict) to stdout",
  },
  args: {
    prompt: { type: "positional", required: false, description: 'The prompt; "-" or nothing reads it from stdin' },
    agent: { type: "enum", options: ["claude", "pi"], default: "claude", description: "Which agent to run" },
    ...agentArgs,
  },
  async run({ args }) {
    const verbosity = setVerbosity(args);
    const cwd = folder(args.cwd);
    const common = commonOptions(args, cwd);
    const schema = envelopeSchema(args);
    const prompt = await readPrompt(args.prompt);
    const agent = args.agent === "pi" ? "pi" : "claude";
    const bin = agent === "pi" ? piBin(args) : claudeBin(args);
    const mode: ProgressMode = verbosity === "quiet" ? "off" : ((args.progress as ProgressMode | undefined) ?? "auto");
    using ledger = openLedger(common.home);
    const view = progressView(mode, agent);
    let outcome: RunOutcome;
    if (agent === "pi") {
      const caps = await piCapabilities(bin, ledger, common.env);
      outcome = await runPi(ledger, {
        ...common,
        ...piOptions(args, common.home),
        bin,
        caps,
        prompt,
        model: args.model,
        schema,
        progress: view.sink,
        signal: interruptSignal(),
      });
    } else {
      outcome = await runClaude(ledger, {
        ...common,
        bin,
        prompt,
        model: args.model,
        tools: list(args.tools),
        schema,
        progress: view.sink,
        signal: interruptSignal(),
      });
    }
    view.close();
    await printVerdict(outcome.verdict, Boolean(args.json), outcome.runDir);
    return outcome.exitCode;
  },
});
