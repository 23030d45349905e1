// The fake opencode: speaks `opencode run --format json` as captured from
// opencode 1.18.33, scripted by a scenario (../scenario.ts). Where agentport
// depends on it, it behaves as opencode does: the session id (`ses_…`) is its
// own and in every record; there is no terminal record (tokens and cost are
// on each step_finish); a prompt given as an argument is wrapped in quotes,
// one from stdin is not; a refused call auto-rejects the permission and ends
// the run with exit 0 after `step_finish(tool-calls)`; retries leave no
// record; a cut stream is asked again forever (`loop`); `run -s ID` from a
// folder other than the session's hangs; an unknown id exits 1. `serve` is
// the fake server (./serve.ts).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { logInvocation } from "../claude.ts";
import { missingDeclaration } from "../ledger-check.ts";
import { readPromptFromStdin, resolveScenario, writeOut } from "../runtime.ts";
import { BUILTIN_SCENARIOS, playCommon, ScenarioSchema, type Scenario, type Step } from "../scenario.ts";
import { fakeOpencodeServe } from "./serve.ts";

export const FAKE_OPENCODE_VERSION = "1.18.33";

/** opencode's fixed tool error for a permission `run` auto-rejects. */
const REJECTED = "The user rejected permission to use this specific tool call.";
// Per million tokens, as the fake's config would price its model.
const PRICE = { input: 1, output: 2 };
// opencode asks again at once after a cut stream (~20 requests a second).
const CUT_RETRY_MS = 50;

/** opencode's scenarios: the shared ones, and the cut-stream loop only opencode has. */
const SCENARIOS = { ...BUILTIN_SCENARIOS, loop: { steps: [{ cut: "This stre" }] } };

interface OpencodeArgs {
  message: string | null;
  format: string;
  session: string | null;
  fork: boolean;
  auto: boolean;
}

const VALUE_FLAGS = new Set(["-m", "--model", "--agent", "--variant", "--scenario", "--title", "--port", "--hostname"]);

function parseArgs(argv: string[]): OpencodeArgs | string {
  if (argv[0] !== "run") return `fake-opencode: only \`run\` is faked, got ${JSON.stringify(argv[0] ?? "")}`;
  const args: OpencodeArgs = { message: null, format: "default", session: null, fork: false, auto: false };
  const words: string[] = [];
  for (let i = 1; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const next = () => argv[++i] ?? "";
    if (arg === "--format") args.format = next();
    else if (arg === "-s" || arg === "--session") args.session = next();
    else if (arg === "--fork") args.fork = true;
    else if (arg === "--auto") args.auto = true;
    else if (VALUE_FLAGS.has(arg)) next();
    else if (arg.startsWith("-")) return `Error: unknown option ${arg}`;
    else words.push(arg);
  }
  if (words.length > 0) args.message = words.join(" ");
  return args;
}

const sessionsDir = () =>
  join(process.env.XDG_DATA_HOME || join(process.env.HOME ?? "/tmp", ".local", "share"), "opencode", "agentport-fake-sessions");

/** An id shaped like opencode's: `ses_` and 26 characters. */
function sessionId(): string {
  const alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return `ses_${Date.now().toString(16).slice(-12)}${Array.from(bytes.slice(0, 14), (b) => alphabet[b % alphabet.length]).join("")}`;
}

export async function fakeOpencode(argv: string[], scenarioSpec: string | undefined): Promise<number> {
  if (argv.includes("--version") || argv.includes("-v")) {
    process.stdout.write(`${FAKE_OPENCODE_VERSION}\n`);
    return 0;
  }
  if (argv.includes("--help") || argv.includes("-h")) {
    // What the capability probes read: the flags `opencode run --help` (or `serve --help`) names.
    if (argv[0] === "serve") {
      process.stdout.write("opencode serve\n\nstarts a headless opencode server\n\n--port\n--hostname\n");
      return 0;
    }
    process.stdout.write(
      `opencode run [message..]\n\nrun opencode with a message\n\n${["--format", "--session", "--fork", "--model", "--auto", "--agent", "--title"].join("\n")}\n`,
    );
    return 0;
  }
  const scenario = await resolveScenario(scenarioSpec ?? "text", SCENARIOS, ScenarioSchema);
  if (argv[0] !== "run" && process.stdin.isTTY === true) {
    // opencode's terminal UI, as far as a test needs it: who started it, where, on which session.
    logInvocation("fake-opencode", argv, { interactive: true });
    const at = argv.indexOf("-s");
    process.stdout.write(
      `fake-opencode interactive: cwd=${process.cwd()} session=${at >= 0 ? (argv[at + 1] ?? "") : ""} argv=${JSON.stringify(argv)}\n`,
    );
    return 0;
  }
  if (argv[0] === "serve") {
    logInvocation("fake-opencode", argv);
    return fakeOpencodeServe(scenario, sessionsDir(), sessionId);
  }
  const args = parseArgs(argv);
  logInvocation("fake-opencode", argv);
  if (typeof args === "string") {
    process.stderr.write(`${args}\n`);
    return 1;
  }
  if (args.session !== null) {
    const undeclared = missingDeclaration(args.session);
    if (undeclared !== null) {
      process.stderr.write(`fake-opencode: ${undeclared}\n`);
      return 3;
    }
  }
  const stdin = await readPromptFromStdin();
  // A message from argv reaches the model in quotes when it has a space; stdin is appended as is.
  const quoted = args.message === null ? "" : args.message.includes(" ") ? `"${args.message}"` : args.message;
  const message = [quoted, stdin].filter(Boolean).join("\n");
  if (!message.trim()) {
    process.stderr.write("Error: You must provide a message or a command\n");
    return 1;
  }
  let id = sessionId();
  let resumed = false;
  if (args.session !== null) {
    const file = join(sessionsDir(), args.session);
    if (!existsSync(file)) {
      process.stderr.write("Error: Session not found\n");
      return 1;
    }
    // From another folder opencode updates the session and then never prints nor exits.
    if (readFileSync(file, "utf8") !== process.cwd()) await new Promise(() => setInterval(() => {}, 1 << 30));
    if (!args.fork) id = args.session;
    resumed = true;
  }
  mkdirSync(sessionsDir(), { recursive: true });
  writeFileSync(join(sessionsDir(), id), process.cwd());
  const played: Scenario = resumed && scenario.resumed !== undefined ? { ...scenario, steps: scenario.resumed } : scenario;
  return new FakeOpencodeRun(played, id, args.format === "json").play();
}

class FakeOpencodeRun {
  private parts = 0;
  private calls = 0;
  private inStep = false;
  private message = 0;

  constructor(
    private readonly scenario: Scenario,
    private readonly id: string,
    private readonly json: boolean,
  ) {}

  private async write(type: string, body: Record<string, unknown>): Promise<void> {
    if (!this.json) return;
    await writeOut(`${JSON.stringify({ type, timestamp: Date.now(), sessionID: this.id, ...body })}\n`);
  }

  private part(type: string, fields: Record<string, unknown>): Record<string, unknown> {
    return { part: { id: `prt_fake${this.parts++}`, messageID: `msg_fake${this.message}`, sessionID: this.id, type, ...fields } };
  }

  private async open(): Promise<void> {
    if (this.inStep) return;
    this.inStep = true;
    this.message += 1;
    await this.write("step_start", this.part("step-start", {}));
  }

  private async finish(reason: string, spent: boolean): Promise<void> {
    this.inStep = false;
    const u = spent ? this.scenario.usage : { input: 0, cached: 0, output: 0 };
    const input = u.input - u.cached;
    const tokens = { total: u.input + u.output, input, output: u.output, reasoning: 0, cache: { write: 0, read: u.cached } };
    const cost = spent ? (input * PRICE.input + u.output * PRICE.output) / 1e6 : 0;
    await this.write("step_finish", this.part("step-finish", { reason, tokens, cost }));
  }

  async play(): Promise<number> {
    for (const step of this.scenario.steps) {
      const code = await this.step(step);
      if (code !== undefined) return code;
    }
    return 0;
  }

  private async step(step: Step): Promise<number | undefined> {
    // A step (one model request) opens with the first thing the model says.
    if ("text" in step || "tool" in step || "refused" in step || "cut" in step || "done" in step) await this.open();
    const common = await playCommon(step, (line) => writeOut(`${line}\n`));
    if (common !== false) return common;
    if ("text" in step) {
      if (!this.json) process.stdout.write(`${step.text}\n`);
      await this.write("text", this.part("text", { text: step.text, time: { start: Date.now(), end: Date.now() } }));
    } else if ("tool" in step) {
      const tool = step.tool.name === "shell" ? "bash" : step.tool.name;
      const state = {
        status: "completed",
        input: step.tool.input,
        output: step.tool.result,
        metadata: { exit: step.tool.failed ? 1 : 0 },
        title: tool,
      };
      await this.write("tool_use", this.part("tool", { tool, callID: `call_fake_${this.calls++}`, state }));
      await this.finish("tool-calls", true);
    } else if ("refused" in step) {
      process.stderr.write(`! permission requested: bash (${step.refused}); auto-rejecting\n`);
      const state = { status: "error", input: { command: step.refused, description: "refused" }, error: REJECTED };
      await this.write("tool_use", this.part("tool", { tool: "bash", callID: `call_fake_${this.calls++}`, state }));
      await this.finish("tool-calls", true);
      // A rejected permission ends the run: no further model call, exit 0.
      return 0;
    } else if ("cut" in step) {
      for (;;) {
        await this.write("text", this.part("text", { text: step.cut }));
        await this.finish("unknown", false);
        await Bun.sleep(CUT_RETRY_MS);
        await this.open();
      }
    } else if ("fail" in step) {
      const status = /\b([45]\d\d)\b/.exec(step.fail)?.[1];
      const data =
        status === undefined
          ? { message: step.fail }
          : { message: step.fail, statusCode: Number(status), isRetryable: Number(status) >= 500 || status === "429" };
      // The error record replaces the open step: opencode prints no step_finish for it.
      await this.write("error", { error: { name: "APIError", data } });
      if (!this.json) process.stderr.write(`Error: ${step.fail}\n`);
      return step.exit;
    } else if ("done" in step) {
      await this.finish("stop", true);
    }
    // `retry` leaves no record: opencode's retries are invisible in run's stream.
    return undefined;
  }
}
