// The fake codex: speaks `codex exec --json` as captured from codex 0.169.0,
// scripted by a scenario (../scenario.ts). It takes codex's own argv and
// behaves as codex does where agentport depends on it: the thread id is its
// own (a UUIDv7-looking id), stdin is read to EOF, outside a git repository
// it needs --skip-git-repo-check, `exec resume ID` continues a thread (the
// usage is the thread's running total), an unknown id exits 1, refusals go to
// stderr only.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { logInvocation } from "../claude.ts";
import { missingDeclaration } from "../ledger-check.ts";
import { readPromptFromStdin, resolveScenario, writeOut } from "../runtime.ts";
import { BUILTIN_SCENARIOS, playSteps, ScenarioSchema, type Scenario, type Step } from "../scenario.ts";

interface CodexArgs {
  json: boolean;
  skipGitCheck: boolean;
  resumeId: string | null;
  sandbox: string;
  model: string | null;
  prompt: string | null;
}

const VALUE_FLAGS = new Set([
  "-m",
  "--model",
  "-s",
  "--sandbox",
  "-c",
  "--config",
  "-C",
  "--cd",
  "--output-schema",
  "-o",
  "--output-last-message",
  "--scenario",
  "--disable",
  "--enable",
  "-p",
  "--profile",
]);

function parseArgs(argv: string[]): CodexArgs | string {
  const args: CodexArgs = { json: false, skipGitCheck: false, resumeId: null, sandbox: "read-only", model: null, prompt: null };
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const next = () => argv[++i] ?? "";
    if (arg === "--json") args.json = true;
    else if (arg === "--skip-git-repo-check") args.skipGitCheck = true;
    else if (arg === "-s" || arg === "--sandbox") args.sandbox = next();
    else if (arg === "-m" || arg === "--model") args.model = next();
    else if (VALUE_FLAGS.has(arg)) next();
    else if (arg.startsWith("-") && arg !== "-") return `error: unexpected argument '${arg}' found`;
    else positional.push(arg);
  }
  if (positional[0] !== "exec") return "fake-codex: only `codex exec` is faked";
  let rest = positional.slice(1);
  if (rest[0] === "resume") {
    args.resumeId = rest[1] ?? null;
    rest = rest.slice(2);
  }
  args.prompt = rest[0] === undefined || rest[0] === "-" ? null : rest[0];
  return args;
}

function insideGit(dir: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, ".git"))) return true;
    if (dirname(d) === d) return false;
  }
}

interface Thread {
  cwd: string;
  input: number;
  cached: number;
  output: number;
}

const threadsDir = () => join(process.env.CODEX_HOME || join(process.env.HOME ?? "/tmp", ".codex"), "agentport-fake-threads");

/** A time-ordered id, shaped like codex's UUIDv7 thread ids. */
function threadId(): string {
  const hex = Date.now().toString(16).padStart(12, "0") + crypto.randomUUID().replace(/-/g, "").slice(12);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export const FAKE_CODEX_VERSION = "0.169.0";

export async function fakeCodex(argv: string[], scenarioSpec: string | undefined): Promise<number> {
  if (argv.includes("--version") || argv.includes("-V")) {
    process.stdout.write(`codex-cli ${FAKE_CODEX_VERSION}\n`);
    return 0;
  }
  if (argv.includes("--help")) {
    // What the capability probe reads: the flags `codex exec --help` names.
    process.stdout.write(
      `Run Codex non-interactively\n\nUsage: codex exec [OPTIONS] [PROMPT]\n\n${[...VALUE_FLAGS, "--json", "--skip-git-repo-check"].filter((f) => f.startsWith("--")).join("\n")}\n`,
    );
    return 0;
  }
  const scenario = await resolveScenario(scenarioSpec ?? "text", BUILTIN_SCENARIOS, ScenarioSchema);
  if (argv[0] === "resume") {
    // codex's terminal UI, as far as a test needs it: who started it, where, on which thread.
    logInvocation("fake-codex", argv, { interactive: true });
    process.stdout.write(`fake-codex interactive: cwd=${process.cwd()} thread=${argv[1] ?? ""} argv=${JSON.stringify(argv)}\n`);
    return 0;
  }
  const parsed = parseArgs(argv);
  logInvocation("fake-codex", argv);
  if (typeof parsed === "string") {
    process.stderr.write(`${parsed}\n`);
    return 2;
  }
  if (!parsed.skipGitCheck && !insideGit(process.cwd())) {
    process.stderr.write("Not inside a trusted directory and --skip-git-repo-check was not specified.\n");
    return 1;
  }
  if (parsed.resumeId !== null) {
    const undeclared = missingDeclaration(parsed.resumeId);
    if (undeclared !== null) {
      process.stderr.write(`fake-codex: ${undeclared}\n`);
      return 3;
    }
  }
  // Like codex: stdin is read to EOF whenever it is not a terminal.
  const stdin = await readPromptFromStdin();
  const prompt = parsed.prompt === null ? stdin : stdin ? `${parsed.prompt}\n\n<stdin>\n${stdin}\n</stdin>` : parsed.prompt;
  if (!prompt.trim()) {
    process.stderr.write("No prompt provided via stdin.\n");
    return 1;
  }
  let id = threadId();
  let thread: Thread = { cwd: process.cwd(), input: 0, cached: 0, output: 0 };
  const resumeFile = parsed.resumeId === null ? null : join(threadsDir(), `${parsed.resumeId}.json`);
  if (resumeFile !== null && parsed.resumeId !== null) {
    if (!existsSync(resumeFile)) {
      // A non-UUID id silently starts a new thread, as codex does; an unknown UUID is an error.
      if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(parsed.resumeId)) {
        process.stderr.write(
          `Error: thread/resume: thread/resume failed: no rollout found for thread id ${parsed.resumeId} (code -32600)\n`,
        );
        return 1;
      }
    } else {
      id = parsed.resumeId;
      thread = { ...(JSON.parse(readFileSync(resumeFile, "utf8")) as Thread), cwd: process.cwd() };
    }
  }
  const played: Scenario = parsed.resumeId !== null && scenario.resumed !== undefined ? { ...scenario, steps: scenario.resumed } : scenario;
  return new FakeCodexRun(played, id, thread).play();
}

class FakeCodexRun {
  private items = 0;
  private retries = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly id: string,
    private readonly thread: Thread,
  ) {}

  private write(record: Record<string, unknown>): Promise<void> {
    return writeOut(`${JSON.stringify(record)}\n`);
  }

  private item(type: "item.started" | "item.completed", item: Record<string, unknown>, id = `item_${this.items++}`): Promise<void> {
    return this.write({ type, item: { id, ...item } });
  }

  async play(): Promise<number> {
    if (this.scenario.header) {
      await this.write({ type: "thread.started", thread_id: this.id });
      await this.item("item.completed", {
        type: "error",
        message:
          "Model metadata for `fake-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.",
      });
      await this.write({ type: "turn.started" });
    }
    return playSteps(this.scenario.steps, (step) => this.step(step));
  }

  /** A step in this agent's dialect (playSteps plays the common ones). */
  private async step(step: Step): Promise<number | undefined> {
    if ("text" in step) {
      await this.item("item.completed", { type: "agent_message", text: step.text });
    } else if ("tool" in step) {
      const id = `item_${this.items++}`;
      const command = `/bin/bash -lc '${String(step.tool.input.command ?? step.tool.name)}'`;
      await this.item(
        "item.started",
        { type: "command_execution", command, aggregated_output: "", exit_code: null, status: "in_progress" },
        id,
      );
      const failed = step.tool.failed;
      await this.item(
        "item.completed",
        {
          type: "command_execution",
          command,
          aggregated_output: `${step.tool.result}\n`,
          exit_code: failed ? 1 : 0,
          status: failed ? "failed" : "completed",
        },
        id,
      );
    } else if ("refused" in step) {
      // codex leaves no item for a refused call: only its tracing line on stderr.
      process.stderr.write(
        `${new Date().toISOString()} ERROR codex_core::tools::router: error=exec_command failed: CreateProcess { message: "Rejected(\\"\`/bin/bash -lc '${step.refused}'\` rejected: policy forbids commands starting with \`${step.refused.split(" ")[0]}\`\\")" }\n`,
      );
    } else if ("retry" in step) {
      this.retries += 1;
      const progress = step.max === 0 ? "waiting for network" : `${this.retries}/${step.max}`;
      await this.write({ type: "error", message: `Reconnecting... ${progress} (${step.retry})` });
    } else if ("fail" in step) {
      await this.write({ type: "error", message: step.fail });
      await this.write({ type: "turn.failed", error: { message: step.fail } });
      return step.exit;
    } else if ("done" in step) {
      this.saveThread();
      const t = this.thread;
      await this.write({
        type: "turn.completed",
        usage: {
          input_tokens: t.input,
          cached_input_tokens: t.cached,
          cache_write_input_tokens: 0,
          output_tokens: t.output,
          reasoning_output_tokens: 0,
        },
      });
    }
    return undefined;
  }

  /** The thread's running total grows by this run's usage, and is kept for a resume. */
  private saveThread(): void {
    const u = this.scenario.usage;
    this.thread.input += u.input;
    this.thread.cached += u.cached;
    this.thread.output += u.output;
    mkdirSync(threadsDir(), { recursive: true });
    writeFileSync(join(threadsDir(), `${this.id}.json`), JSON.stringify(this.thread));
  }
}
