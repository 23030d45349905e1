import { defineCommand } from "citty";
import { DEFAULT_MAX_LINE_BYTES } from "../../core/frame.ts";
import { runClaude } from "../../agents/execute.ts";
import { resolveBin } from "../../agents/resolve-bin.ts";
import { stateHome } from "../../io/paths.ts";
import { resolve } from "node:path";
import { existsSync, statSync } from "node:fs";
import { environmentError, usageError } from "../errors.ts";
import { list, outputArgs, positiveInt, seconds, verbosityArgs } from "../common.ts";
import { readPrompt } from "../prompt.ts";
import { printVerdict } from "../verdict-output.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { setVerbosity } from "../output.ts";
import { interruptSignal } from "../interrupt.ts";

export const runCommand = defineCommand({
  meta: {
    name: "run",
    description: "Run a headless coding agent once: live progress on stderr, the final text (or --json verdict) on stdout",
  },
  args: {
    prompt: { type: "positional", required: false, description: 'The prompt; "-" or nothing reads it from stdin' },
    agent: { type: "enum", options: ["claude"], default: "claude", description: "Which agent to run" },
    model: { type: "string", description: "Model id passed to the agent" },
    cwd: { type: "string", description: "Folder the agent works in (default: the current folder)" },
    tools: { type: "string", valueHint: "a,b", description: "Allowed tools, comma-separated" },
    timeout: { type: "string", valueHint: "S", description: "Kill the agent's process group after S seconds (exit 4)" },
    linger: { type: "string", valueHint: "S", description: "End an agent still alive S seconds after its result (default 10)" },
    "claude-bin": { type: "string", description: "The claude binary (else $AGENTPORT_CLAUDE_BIN, else PATH)" },
    home: { type: "string", description: "State folder (else $AGENTPORT_HOME, $XDG_STATE_HOME/agentport, ~/.local/state/agentport)" },
    ...outputArgs,
    ...verbosityArgs,
  },
  async run({ args }) {
    const verbosity = setVerbosity(args);
    const cwd = resolve(args.cwd ?? ".");
    if (!existsSync(cwd) || !statSync(cwd).isDirectory()) throw usageError(`--cwd ${cwd}: no such folder`);
    const maxLineBytes = positiveInt("max-line-bytes", args["max-line-bytes"], DEFAULT_MAX_LINE_BYTES);
    const timeoutMs = seconds("timeout", args.timeout);
    const lingerMs = seconds("linger", args.linger) ?? 10_000;
    const prompt = await readPrompt(args.prompt);
    const bin = resolveBin("claude", args["claude-bin"], "AGENTPORT_CLAUDE_BIN");
    if (!bin.ok) throw environmentError(bin.reason);
    const mode: ProgressMode = verbosity === "quiet" ? "off" : ((args.progress as ProgressMode | undefined) ?? "auto");
    const view = progressView(mode, "claude");
    const outcome = await runClaude({
      bin: bin.path,
      prompt,
      cwd,
      home: stateHome(args.home),
      model: args.model,
      tools: list(args.tools),
      timeoutMs,
      lingerMs,
      maxLineBytes,
      progress: view.sink,
      signal: interruptSignal(),
    });
    view.close();
    await printVerdict(outcome.verdict, Boolean(args.json), outcome.runDir);
    return outcome.exitCode;
  },
});
