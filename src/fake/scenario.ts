// The scenario language of the fake codex and the fake gemini: one list of
// steps, each fake printing them in its own agent's dialect. Validated by zod
// so a typo in a test's scenario fails loudly instead of printing nothing.
import { z } from "zod";
import { closeStdout, startGrandchild, writeOut } from "./runtime.ts";

const Usage = z.strictObject({
  input: z.number().int().nonnegative().default(1200),
  cached: z.number().int().nonnegative().default(200),
  output: z.number().int().nonnegative().default(7),
});

export const StepSchema = z.union([
  /** An assistant message (codex: an agent_message item; gemini: its text in deltas). */
  z.strictObject({ text: z.string() }),
  /** A tool call and its result; `failed` makes the tool report an error. */
  z.strictObject({
    tool: z.strictObject({
      name: z.string().default("shell"),
      input: z.record(z.string(), z.unknown()).default({}),
      result: z.string().default("ok"),
      failed: z.boolean().default(false),
    }),
  }),
  /** A refused tool call: codex says it only on stderr (its router line), gemini as a tool_result error. */
  z.strictObject({ refused: z.string() }),
  /** A file write that asks its permission (opencode --serve: an `edit` ask for this path, relative to the folder; written when allowed); the other fakes print nothing for it. */
  z.strictObject({ write: z.string() }),
  /** A provider retry notice (codex: "Reconnecting... n/max (why)", or with max 0 "waiting for network"; gemini: a stderr line only). */
  z.strictObject({ retry: z.string(), max: z.number().int().nonnegative().default(2) }),
  /** The run ends in this error (codex: error + turn.failed; gemini: result status error), then exits with `exit`. */
  z.strictObject({ fail: z.string(), exit: z.number().int().min(0).max(255).default(1) }),
  /** The run's end record (codex: turn.completed with the usage; gemini: result status success). */
  z.strictObject({ done: z.literal(true) }),
  /** The model's stream cut after this text, before its finish reason: opencode asks again at once, forever (a step ending `unknown` each time); the other fakes print nothing for it. */
  z.strictObject({ cut: z.string() }),
  /** A line written verbatim. */
  z.strictObject({ raw: z.string() }),
  z.strictObject({ stderr: z.string() }),
  z.strictObject({ sleep: z.number().int().nonnegative() }),
  z.strictObject({ exit: z.number().int().min(0).max(255) }),
  /** Sleep forever; with `ignoreTerm`, SIGTERM is ignored (gemini's launcher does). */
  z.strictObject({ hang: z.literal(true), ignoreTerm: z.boolean().default(false) }),
  /** Kill itself with this signal (a crash agentport did not cause). */
  z.strictObject({ signal: z.enum(["SIGKILL", "SIGSEGV", "SIGABRT"]) }),
  /** Close stdout while the process lives on (an agent that hands its stream back early). */
  z.strictObject({ closeStdout: z.literal(true) }),
  /** Start a grandchild in the same group (or, with `ownGroup`, in a group of its own, as gemini's shell tool is), its pid written to this file. */
  z.strictObject({ grandchild: z.string(), ownGroup: z.boolean().default(false) }),
]);
export type Step = z.infer<typeof StepSchema>;

export const ScenarioSchema = z.strictObject({
  steps: z.array(StepSchema),
  /** Played instead of `steps` on a resume. */
  resumed: z.array(StepSchema).optional(),
  /** false: none of the records a run opens with (codex's thread.started, gemini's init), as when the agent fails before its stream starts. */
  header: z.boolean().default(true),
  /** What one run adds to the session's token count. */
  usage: Usage.default({ input: 1200, cached: 200, output: 7 }),
});
export type Scenario = z.infer<typeof ScenarioSchema>;
type ScenarioInput = z.input<typeof ScenarioSchema>;

const ok = (text: string): ScenarioInput["steps"] => [{ text }, { done: true }];

/** The named scenarios of both fakes: text, tool, error, hang, stall, crash and the rest. */
export const BUILTIN_SCENARIOS: Record<string, ScenarioInput> = {
  text: { steps: ok("Hello from the fake agent.") },
  tool: {
    steps: [
      { text: "Let me look." },
      { tool: { name: "shell", input: { command: "cat notes.txt" }, result: "line one" } },
      { tool: { name: "shell", input: { command: "cat missing.txt" }, result: "No such file", failed: true } },
      { refused: "touch outside.txt" },
      ...ok("All done."),
    ],
  },
  error: {
    steps: [
      { retry: "unexpected status 500 Internal Server Error" },
      { retry: "unexpected status 500 Internal Server Error" },
      { fail: "unexpected status 500 Internal Server Error: standin error" },
    ],
  },
  auth: { steps: [{ fail: "unexpected status 401 Unauthorized: Incorrect API key provided." }] },
  hang: { steps: [{ text: "Working forever." }, { grandchild: "" }, { hang: true }] },
  "hang-hard": { steps: [{ text: "Ignoring TERM." }, { grandchild: "", ownGroup: true }, { hang: true, ignoreTerm: true }] },
  stall: { steps: [{ text: "Thinking, then silence." }, { sleep: 60_000 }, ...ok("too late")] },
  crash: { steps: [{ text: "Starting." }, { stderr: "fatal: something broke\n" }, { signal: "SIGKILL" }] },
  "no-network": {
    steps: [
      { retry: "Connection failed: error sending request", max: 0 },
      { retry: "Connection failed: error sending request", max: 0 },
      { sleep: 60_000 },
    ],
  },
  memory: { steps: ok("Noted: BLUE."), resumed: ok("The word was BLUE.") },
};

/** The steps in order, each a common one or the dialect's own (`own`), until one gives an exit code; 0 after the last. */
export async function playSteps(steps: readonly Step[], own: (step: Step) => Promise<number | undefined>): Promise<number> {
  for (const step of steps) {
    const common = await playCommon(step, (line) => writeOut(`${line}\n`));
    const code = common !== false ? common : await own(step);
    if (code !== undefined) return code;
  }
  return 0;
}

/** The steps every fake plays the same way; false when the step is the dialect's to print. */
export async function playCommon(step: Step, write: (line: string) => Promise<void>): Promise<number | undefined | false> {
  if ("raw" in step) await write(step.raw);
  else if ("stderr" in step) process.stderr.write(step.stderr);
  else if ("sleep" in step) await Bun.sleep(step.sleep);
  else if ("exit" in step && !("fail" in step)) return step.exit;
  else if ("hang" in step) {
    if (step.ignoreTerm) process.on("SIGTERM", () => {});
    await new Promise(() => setInterval(() => {}, 1 << 30));
  } else if ("signal" in step) {
    process.kill(process.pid, step.signal);
    await Bun.sleep(1_000);
  } else if ("closeStdout" in step) {
    await closeStdout();
  } else if ("grandchild" in step) {
    await startGrandchild(step.grandchild, step.ownGroup);
  } else return false;
  return undefined;
}
