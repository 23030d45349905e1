// The fake gemini: speaks `gemini -p --output-format stream-json` as captured
// from gemini 0.61.0, scripted by a scenario (../scenario.ts). It takes
// gemini's own argv and behaves as gemini does where agentport depends on it:
// an untrusted folder exits 55, `--session-id` is echoed (an id that exists
// exits 42), sessions are per folder (`--resume` from another exits 42), stdin
// is read to EOF and put before -p, a signal exits 0 with no result, and
// without GEMINI_CLI_NO_RELAUNCH=true it ignores SIGTERM as its launcher does.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logInvocation } from "../claude.ts";
import { missingDeclaration } from "../ledger-check.ts";
import { readPromptFromStdin, resolveScenario, writeOut } from "../runtime.ts";
import { BUILTIN_SCENARIOS, playSteps, ScenarioSchema, type Scenario, type Step } from "../scenario.ts";

export const FAKE_GEMINI_VERSION = "0.61.0";

interface GeminiArgs {
  prompt: string | null;
  format: string;
  model: string;
  sessionId: string | null;
  resume: string | null;
  skipTrust: boolean;
  approvalMode: string;
}

const VALUE_FLAGS = new Set(["--approval-mode", "--scenario", "--policy", "--allowed-tools", "--include-directories"]);

function parseArgs(argv: string[]): GeminiArgs | string {
  const args: GeminiArgs = {
    prompt: null,
    format: "text",
    model: "auto",
    sessionId: null,
    resume: null,
    skipTrust: false,
    approvalMode: "default",
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const next = () => argv[++i] ?? "";
    if (arg === "-p" || arg === "--prompt") args.prompt = next();
    else if (arg === "-o" || arg === "--output-format") args.format = next();
    else if (arg === "-m" || arg === "--model") args.model = next();
    else if (arg === "--session-id") args.sessionId = next();
    else if (arg === "-r" || arg === "--resume") args.resume = next();
    else if (arg === "--skip-trust") args.skipTrust = true;
    else if (arg === "-y" || arg === "--yolo") args.approvalMode = "yolo";
    else if (arg === "--approval-mode") args.approvalMode = next();
    else if (VALUE_FLAGS.has(arg)) next();
    else if (arg.startsWith("-")) return `Unknown argument: ${arg.replace(/^-+/, "")}`;
    else args.prompt = arg;
  }
  return args;
}

/** This folder's sessions, as gemini keeps them per project. */
const projectDir = () =>
  join(process.env.HOME ?? "/tmp", ".gemini", "agentport-fake", createHash("sha256").update(process.cwd()).digest("hex").slice(0, 16));

export async function fakeGemini(argv: string[], scenarioSpec: string | undefined): Promise<number> {
  if (argv.includes("--version") || argv.includes("-v")) {
    process.stdout.write(`${FAKE_GEMINI_VERSION}\n`);
    return 0;
  }
  if (argv.includes("--help")) {
    // What the capability probe reads: the flags `gemini --help` names.
    const flags = ["--prompt", "--output-format", "--model", "--session-id", "--resume", "--skip-trust", "--yolo", ...VALUE_FLAGS].filter(
      (f) => f !== "--scenario",
    );
    process.stdout.write(`Usage: gemini [options]\n\n${flags.join("\n")}\n`);
    return 0;
  }
  const scenario = await resolveScenario(scenarioSpec ?? "text", BUILTIN_SCENARIOS, ScenarioSchema);
  const args = parseArgs(argv);
  const interactive = typeof args !== "string" && args.prompt === null && process.stdin.isTTY === true;
  logInvocation("fake-gemini", argv, { no_relaunch: process.env.GEMINI_CLI_NO_RELAUNCH ?? null, interactive });
  if (typeof args === "string") {
    process.stderr.write(`${args}\n`);
    return 1;
  }
  if (interactive) {
    // gemini's terminal UI, as far as a test needs it: who started it, where, on which session.
    process.stdout.write(
      `fake-gemini interactive: cwd=${process.cwd()} session=${args.resume ?? args.sessionId ?? ""} argv=${JSON.stringify(argv)}\n`,
    );
    return 0;
  }
  if (!args.skipTrust && process.env.GEMINI_CLI_TRUST_WORKSPACE !== "true") {
    process.stderr.write(
      "Gemini CLI is not running in a trusted directory. To proceed, either use `--skip-trust`, set the `GEMINI_CLI_TRUST_WORKSPACE=true` environment variable, or trust this directory in interactive mode.\n",
    );
    return 55;
  }
  const sessions = projectDir();
  let id: string;
  if (args.resume !== null) {
    if (!existsSync(join(sessions, args.resume))) {
      process.stderr.write("Error resuming session: No previous sessions found for this project.\n");
      return 42;
    }
    id = args.resume;
  } else {
    id = args.sessionId ?? crypto.randomUUID();
    if (existsSync(join(sessions, id))) {
      process.stderr.write(
        `Error starting session: Session ID "${id}" already exists. Use --resume to resume it, or provide a different ID.\n`,
      );
      return 42;
    }
  }
  const undeclared = missingDeclaration(id);
  if (undeclared !== null) {
    process.stderr.write(`fake-gemini: ${undeclared}\n`);
    return 3;
  }
  // The launcher ignores SIGTERM; the single process (no relaunch) stops mid-stream and exits 0.
  if (process.env.GEMINI_CLI_NO_RELAUNCH === "true") process.on("SIGTERM", () => process.exit(0));
  else process.on("SIGTERM", () => {});
  const stdin = await readPromptFromStdin();
  const prompt = [stdin, args.prompt ?? ""].filter(Boolean).join("\n\n");
  if (!prompt.trim()) {
    process.stderr.write("No input provided via stdin. Input can be provided by piping data into gemini or using the --prompt option.\n");
    return 42;
  }
  mkdirSync(sessions, { recursive: true });
  writeFileSync(join(sessions, id), "");
  const played: Scenario = args.resume !== null && scenario.resumed !== undefined ? { ...scenario, steps: scenario.resumed } : scenario;
  return new FakeGeminiRun(played, id, args.model, args.approvalMode).play(prompt);
}

class FakeGeminiRun {
  private calls = 0;
  private retries = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly id: string,
    private readonly model: string,
    private readonly approvalMode: string,
  ) {}

  private write(record: Record<string, unknown>): Promise<void> {
    return writeOut(`${JSON.stringify({ type: record.type, timestamp: new Date().toISOString(), ...record })}\n`);
  }

  async play(prompt: string): Promise<number> {
    if (this.scenario.header) {
      await this.write({ type: "init", session_id: this.id, model: this.model });
      await this.write({ type: "message", role: "user", content: prompt });
    }
    return playSteps(this.scenario.steps, (step) => this.step(step));
  }

  /** A step in this agent's dialect (playSteps plays the common ones). */
  private async step(step: Step): Promise<number | undefined> {
    if ("text" in step) {
      const half = Math.ceil(step.text.length / 2);
      for (const part of [step.text.slice(0, half), step.text.slice(half)].filter(Boolean))
        await this.write({ type: "message", role: "assistant", content: part, delta: true });
    } else if ("tool" in step) {
      const name = step.tool.name === "shell" ? "run_shell_command" : step.tool.name;
      const toolId = `${name}__${name}_${Date.now()}_${this.calls++}`;
      await this.write({ type: "tool_use", tool_name: name, tool_id: toolId, parameters: step.tool.input });
      // A shell command that fails is still a success for gemini: the exit code is only in the output.
      await this.write({
        type: "tool_result",
        tool_id: toolId,
        status: "success",
        output: step.tool.failed ? `${step.tool.result}\nExit Code: 1` : step.tool.result,
      });
    } else if ("refused" in step) {
      const toolId = `run_shell_command__run_shell_command_${Date.now()}_${this.calls++}`;
      const yolo = this.approvalMode === "yolo";
      await this.write({ type: "tool_use", tool_name: "run_shell_command", tool_id: toolId, parameters: { command: step.refused } });
      const message = yolo ? "Tool execution denied by policy." : 'Tool "run_shell_command" not found.';
      await this.write({
        type: "tool_result",
        tool_id: toolId,
        status: "error",
        output: message,
        error: { type: yolo ? "policy_violation" : "tool_not_registered", message },
      });
    } else if ("retry" in step) {
      this.retries += 1;
      process.stderr.write(`Attempt ${this.retries} failed: ${step.retry}. Retrying with backoff...\n`);
    } else if ("fail" in step) {
      await this.write({
        type: "result",
        status: "error",
        error: { type: "unknown", message: `[API Error: ${step.fail}]` },
        stats: this.stats(false),
      });
      return step.exit;
    } else if ("done" in step) {
      await this.write({ type: "result", status: "success", stats: this.stats(true) });
    }
    return undefined;
  }

  private stats(spent: boolean): Record<string, unknown> {
    const u = spent ? this.scenario.usage : { input: 0, cached: 0, output: 0 };
    const tokens = {
      total_tokens: u.input + u.output,
      input_tokens: u.input,
      output_tokens: u.output,
      cached: u.cached,
      input: u.input - u.cached,
    };
    return { ...tokens, duration_ms: 42, tool_calls: this.calls, models: { [this.model]: tokens } };
  }
}
