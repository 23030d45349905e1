// The fake claude: speaks `claude -p --output-format stream-json --verbose`
// as captured from claude 2.1.197, scripted by a scenario. It takes claude's
// own argv, so agentport drives it exactly as it drives the real one.
import { BUILTIN_SCENARIOS, ScenarioSchema, type Scenario, type Step } from "./claude-scenarios.ts";
import { closeStdout, floodStderr, readPromptFromStdin, resolveScenario, startGrandchild, writeHugeLine, writeOut } from "./runtime.ts";
import { missingDeclaration } from "./ledger-check.ts";
import { appendFileSync } from "node:fs";

interface ClaudeArgs {
  sessionId: string;
  model: string | null;
  prompt: string | null;
  /** `--resume`: the scenario's `resumed` steps play, when it has them. */
  resumed: boolean;
  /** `-p`/`--print`: headless; without it claude would open its terminal UI. */
  print: boolean;
}

function parseArgs(argv: string[]): ClaudeArgs {
  let sessionId: string | null = null;
  let model: string | null = null;
  let prompt: string | null = null;
  let resumed = false;
  let print = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const next = () => argv[++i] ?? "";
    if (arg === "-p" || arg === "--print") print = true;
    if (arg === "--resume" || arg === "-r") resumed = true;
    if (arg === "--session-id" || arg === "--resume" || arg === "-r") sessionId = next();
    else if (arg === "--model") model = next();
    else if (arg === "--output-format" || arg === "--permission-mode" || arg === "--scenario" || arg === "--append-system-prompt") next();
    else if (arg.startsWith("-")) continue;
    else prompt = arg;
  }
  return { sessionId: sessionId ?? crypto.randomUUID(), model, prompt, resumed, print };
}

/**
 * With $AGENTPORT_FAKE_LOG naming a file, every invocation appends one JSON
 * line there: argv, cwd, whether stdin is a terminal, MAX_THINKING_TOKENS, and
 * the variables $AGENTPORT_FAKE_LOG_ENV names (comma-separated; null if unset).
 */
export function logInvocation(fake: string, argv: string[], extra: Record<string, unknown> = {}): void {
  const file = process.env.AGENTPORT_FAKE_LOG;
  if (!file) return;
  const names = (process.env.AGENTPORT_FAKE_LOG_ENV ?? "").split(",").filter(Boolean);
  const env = Object.fromEntries(names.map((n) => [n, process.env[n] ?? null]));
  const record = {
    fake,
    argv,
    cwd: process.cwd(),
    tty: process.stdin.isTTY === true,
    max_thinking_tokens: process.env.MAX_THINKING_TOKENS ?? null,
    env,
    ...extra,
  };
  appendFileSync(file, `${JSON.stringify(record)}\n`);
}

export async function fakeClaude(argv: string[], scenarioSpec: string | undefined): Promise<number> {
  const scenario = await resolveScenario(scenarioSpec ?? "text", BUILTIN_SCENARIOS, ScenarioSchema);
  const args = parseArgs(argv);
  logInvocation("fake-claude", argv, { interactive: !args.print });
  if (!args.print) {
    // claude's terminal UI, as far as a test needs it: who started it, where, on which session.
    process.stdout.write(`fake-claude interactive: cwd=${process.cwd()} session=${args.sessionId} argv=${JSON.stringify(argv)}\n`);
    return 0;
  }
  const undeclared = missingDeclaration(args.sessionId);
  if (undeclared !== null) {
    process.stderr.write(`fake-claude: ${undeclared}\n`);
    return 3;
  }
  const played = args.resumed && scenario.resumed !== undefined ? { ...scenario, steps: scenario.resumed } : scenario;
  const run = new FakeClaudeRun(played, args);
  const early = await run.playBeforePrompt();
  if (early !== undefined) return early;
  // Like claude: stdin is read to EOF when no prompt is on the command line.
  const prompt = args.prompt ?? (await readPromptFromStdin());
  if (!prompt.trim()) {
    process.stderr.write("Input must be provided either through stdin or as a prompt argument when using --print\n");
    return 1;
  }
  return run.play();
}

class FakeClaudeRun {
  private readonly session: string;
  private readonly model: string;
  private seq = 0;
  private turns = 0;
  private retries = 0;
  private lastText = "";
  private initialised = false;

  constructor(
    private readonly scenario: Scenario,
    args: ClaudeArgs,
  ) {
    this.session = args.sessionId;
    this.model = args.model ?? scenario.model;
  }

  /** The steps before the prompt is read (after init, unless left out); an exit code if one of them ends the run. */
  async playBeforePrompt(): Promise<number | undefined> {
    if (this.scenario.beforePrompt.length === 0) return undefined;
    return this.playSteps(this.scenario.beforePrompt);
  }

  async play(): Promise<number> {
    return (await this.playSteps(this.scenario.steps)) ?? 0;
  }

  private async playSteps(steps: Step[]): Promise<number | undefined> {
    if (!this.scenario.noInit && !this.initialised) await this.init();
    this.initialised = true;
    for (const step of steps) {
      const code = await this.step(step);
      if (code !== undefined) return code;
    }
    return undefined;
  }

  private id(prefix: string): string {
    this.seq += 1;
    return `${prefix}_fake_${String(this.seq).padStart(4, "0")}`;
  }

  private record(fields: Record<string, unknown>): Promise<void> {
    return writeOut(`${JSON.stringify({ ...fields, session_id: this.session, uuid: crypto.randomUUID() })}\n`);
  }

  private init(): Promise<void> {
    return this.record({
      type: "system",
      subtype: "init",
      cwd: process.cwd(),
      tools: ["Bash", "Read", "Edit", "Write", "Grep", "Glob"],
      model: this.model,
      permissionMode: "default",
      apiKeySource: "none",
    });
  }

  private assistant(content: unknown[]): Promise<void> {
    this.turns += 1;
    return this.record({
      type: "assistant",
      message: {
        id: `msg_fake_${this.turns}`,
        type: "message",
        role: "assistant",
        model: this.model,
        content,
        stop_reason: null,
        usage: { input_tokens: 100, output_tokens: 1 },
      },
      parent_tool_use_id: null,
    });
  }

  private async step(step: Step): Promise<number | undefined> {
    if ("text" in step) {
      this.lastText = step.text;
      await this.assistant([{ type: "text", text: step.text }]);
    } else if ("thinking" in step) {
      await this.record({
        type: "system",
        subtype: "thinking_tokens",
        estimated_tokens: step.thinking,
        estimated_tokens_delta: step.thinking,
      });
      await this.assistant([{ type: "thinking", thinking: "(private)", signature: "sig" }]);
    } else if ("tool" in step) {
      const id = this.id("toolu");
      await this.assistant([{ type: "tool_use", id, name: step.tool.name, input: step.tool.input }]);
      if (step.tool.run !== undefined)
        await Bun.spawn(["sh", "-c", step.tool.run], { stdin: "ignore", stdout: "ignore", stderr: "inherit" }).exited;
      await this.record({
        type: "user",
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: id, content: step.tool.result, is_error: step.tool.is_error }],
        },
        parent_tool_use_id: null,
      });
    } else if ("retry" in step) {
      this.retries += 1;
      await this.record({
        type: "system",
        subtype: "api_retry",
        attempt: this.retries,
        max_retries: step.retry.max,
        retry_delay_ms: 512.5,
        error_status: step.retry.status,
        error: step.retry.error,
      });
    } else if ("hook" in step) {
      await this.record({
        type: "system",
        subtype: "hook_started",
        hook_id: this.id("hook"),
        hook_name: step.hook,
        hook_event: "SessionStart",
      });
    } else if ("init" in step) {
      await this.init();
    } else if ("result" in step) {
      await this.result(step.result);
    } else if ("raw" in step) {
      await writeOut(step.lf ? `${step.raw}\n` : step.raw);
    } else if ("hex" in step) {
      await writeOut(Uint8Array.from(step.hex.match(/../g) ?? [], (h) => Number.parseInt(h, 16)));
    } else if ("oversize" in step) {
      await this.oversize(step.oversize);
    } else if ("stderr" in step) {
      process.stderr.write(step.stderr);
    } else if ("stderrFlood" in step) {
      await floodStderr(step.stderrFlood);
    } else if ("sleep" in step) {
      await Bun.sleep(step.sleep);
    } else if ("exit" in step) {
      return step.exit;
    } else if ("hang" in step) {
      if (step.ignoreTerm) process.on("SIGTERM", () => {});
      await new Promise(() => setInterval(() => {}, 1 << 30));
    } else if ("closeStdout" in step) {
      await closeStdout();
    } else if ("signal" in step) {
      process.kill(process.pid, step.signal);
      await Bun.sleep(1_000);
    } else if ("grandchild" in step) {
      await startGrandchild(step.grandchild, step.ownGroup);
    }
    return undefined;
  }

  private result(r: Extract<Step, { result: unknown }>["result"]): Promise<void> {
    const fields: Record<string, unknown> = {
      type: "result",
      subtype: r.subtype,
      is_error: r.is_error,
      api_error_status: r.api_error_status,
      duration_ms: 1234,
      duration_api_ms: 1000,
      num_turns: Math.max(1, this.turns),
      stop_reason: r.is_error ? "stop_sequence" : "end_turn",
      total_cost_usd: r.cost_usd,
      usage: { input_tokens: 3000, cache_creation_input_tokens: 10, cache_read_input_tokens: 200, output_tokens: 42 },
      modelUsage: {},
      permission_denials: r.denials,
    };
    if (r.subtype === "success") fields.result = r.text ?? this.lastText;
    if (r.errors !== undefined) fields.errors = r.errors;
    if (r.terminal_reason !== undefined) fields.terminal_reason = r.terminal_reason;
    else if (r.subtype === "success") fields.terminal_reason = "completed";
    return this.record(fields);
  }

  /** One tool_result line of `bytes` bytes. */
  private async oversize(bytes: number): Promise<void> {
    const head = `{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_big","content":"`;
    await writeHugeLine(bytes, head, `"}]},"session_id":"${this.session}"}\n`);
  }
}
