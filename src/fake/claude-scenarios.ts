// Scenarios for the fake claude: what it prints, step by step. Validated by
// zod so a typo in a test's scenario fails loudly instead of printing nothing.
import { z } from "zod";

const ToolStep = z.strictObject({
  name: z.string(),
  input: z.record(z.string(), z.unknown()).default({}),
  result: z.string().default("ok"),
  is_error: z.boolean().default(false),
  /** A shell command the tool really runs (sh -c, in the fake's folder) between its call and its result: a file written, a daemon started, a silent busy wait. */
  run: z.string().optional(),
});

export const StepSchema = z.union([
  z.strictObject({ text: z.string() }),
  z.strictObject({ thinking: z.number().int().nonnegative() }),
  z.strictObject({ tool: ToolStep }),
  z.strictObject({
    retry: z.strictObject({
      status: z.number().int().nullable().default(500),
      error: z.string().default("server_error"),
      max: z.number().int().default(10),
    }),
  }),
  z.strictObject({ hook: z.string() }),
  z.strictObject({ init: z.literal(true) }),
  z.strictObject({
    result: z
      .object({
        subtype: z.string().default("success"),
        is_error: z.boolean().default(false),
        text: z.string().optional(),
        errors: z.array(z.string()).optional(),
        api_error_status: z.number().int().nullable().default(null),
        denials: z
          .array(z.strictObject({ tool_name: z.string(), tool_use_id: z.string(), tool_input: z.record(z.string(), z.unknown()) }))
          .default([]),
        cost_usd: z.number().default(0.0123),
        terminal_reason: z.string().optional(),
      })
      .default({ subtype: "success", is_error: false, api_error_status: null, denials: [], cost_usd: 0.0123 }),
  }),
  /** A line written verbatim; `lf: false` leaves it unterminated. */
  z.strictObject({ raw: z.string(), lf: z.boolean().default(true) }),
  /** Bytes written verbatim, given as hex (invalid UTF-8, say). */
  z.strictObject({ hex: z.string().regex(/^([0-9a-fA-F]{2})*$/) }),
  /** One `user` record whose tool_result is this many bytes long, written in pieces. */
  z.strictObject({ oversize: z.number().int().positive() }),
  z.strictObject({ stderr: z.string() }),
  /** This many bytes of stderr, in lines, written as fast as the pipe takes them. */
  z.strictObject({ stderrFlood: z.number().int().positive() }),
  z.strictObject({ sleep: z.number().int().nonnegative() }),
  z.strictObject({ exit: z.number().int().min(0).max(255) }),
  /** Sleep forever; with `ignoreTerm`, SIGTERM too is ignored. */
  z.strictObject({ hang: z.literal(true), ignoreTerm: z.boolean().default(false) }),
  /** Close stdout and live on (the stream ends before the process does). */
  z.strictObject({ closeStdout: z.literal(true) }),
  /** Kill itself with this signal (a crash agentport did not cause). */
  z.strictObject({ signal: z.enum(["SIGKILL", "SIGSEGV", "SIGABRT"]) }),
  /** Start a grandchild that sleeps in the same process group (with `ownGroup`, in a session of its own), and write its pid to this file. */
  z.strictObject({ grandchild: z.string(), ownGroup: z.boolean().default(false) }),
]);
export type Step = z.infer<typeof StepSchema>;

export const ScenarioSchema = z.strictObject({
  /** Leave out the leading system/init. */
  noInit: z.boolean().default(false),
  model: z.string().default("claude-fake-1"),
  steps: z.array(StepSchema),
  /** Played before stdin is read: an agent that talks before it reads its prompt. */
  beforePrompt: z.array(StepSchema).default([]),
  /** Played instead of `steps` when claude is started with --resume (a nudge, a resume). */
  resumed: z.array(StepSchema).optional(),
});
export type Scenario = z.infer<typeof ScenarioSchema>;

type ScenarioInput = z.input<typeof ScenarioSchema>;

const ok = (text: string): ScenarioInput["steps"] => [{ text }, { result: { text } }];

/** The named scenarios every test and the self-test can ask for. */
export const BUILTIN_SCENARIOS: Record<string, ScenarioInput> = {
  text: { steps: ok("Hello from the fake claude.") },
  tools: {
    steps: [
      { text: "Reading first." },
      { tool: { name: "Read", input: { file_path: "notes.txt" }, result: "line one" } },
      { tool: { name: "Bash", input: { command: "echo SECRET=hunter2", description: "Print a greeting" }, result: "hi" } },
      { tool: { name: "Read", input: { file_path: "missing.txt" }, result: "File does not exist.", is_error: true } },
      ...ok("Done."),
    ],
  },
  thinking: { steps: [{ hook: "SessionStart:startup" }, { init: true }, { thinking: 120 }, ...ok("4")], noInit: true },
  retry: { steps: [{ retry: { status: 500, error: "server_error", max: 10 } }, ...ok("Recovered after a retry.")] },
  "api-error": {
    steps: [
      { retry: { status: 500, error: "server_error", max: 2 } },
      { retry: { status: 500, error: "server_error", max: 2 } },
      { result: { is_error: true, text: "API Error: 500 Internal server error.", api_error_status: 500, cost_usd: 0 } },
      { exit: 1 },
    ],
  },
  "auth-error": {
    steps: [
      { retry: { status: 401, error: "authentication_failed", max: 1 } },
      { result: { is_error: true, text: "Invalid API key · Fix external API key", api_error_status: 401, cost_usd: 0 } },
      { exit: 1 },
    ],
  },
  "error-max-turns": {
    steps: [
      { tool: { name: "Bash", input: { command: "ls", description: "List files" }, result: "a" } },
      {
        result: {
          subtype: "error_max_turns",
          is_error: true,
          errors: ["Reached maximum number of turns (2)"],
          terminal_reason: "max_turns",
        },
      },
      { exit: 1 },
    ],
  },
  "error-during-execution": {
    noInit: true,
    steps: [
      {
        result: {
          subtype: "error_during_execution",
          is_error: true,
          errors: ["No conversation found with session ID: 00000000-0000-4000-8000-000000000000"],
          cost_usd: 0,
        },
      },
      { exit: 1 },
    ],
  },
  "error-max-budget": {
    steps: [
      { text: "Working." },
      { result: { subtype: "error_max_budget_usd", is_error: true, errors: ["Reached maximum budget ($0.03)"], cost_usd: 0.031 } },
      { exit: 1 },
    ],
  },
  denials: {
    steps: [
      {
        tool: {
          name: "Bash",
          input: { command: "touch x", description: "Create an empty file" },
          result: "Permission to use Bash has been denied.",
          is_error: true,
        },
      },
      { text: "The command was not permitted." },
      {
        result: {
          text: "The command was not permitted.",
          denials: [
            { tool_name: "Bash", tool_use_id: "toolu_fake_1", tool_input: { command: "touch x", description: "Create an empty file" } },
          ],
        },
      },
    ],
  },
  question: {
    steps: [
      { tool: { name: "AskUserQuestion", input: { questions: [] }, result: "No such tool available", is_error: true } },
      ...ok("Nobody answered."),
    ],
  },
  oversize: { steps: [{ text: "Reading a big file." }, { oversize: 9 * 1024 * 1024 }, ...ok("Read it.")] },
  "oversize-result": {
    steps: [{ text: "x" }, { raw: `{"type":"result","subtype":"success","is_error":false,"result":"${"y".repeat(2048)}"}` }],
  },
  u2028: { steps: ok("one\u2028two\u2029three") },
  "invalid-utf8": { steps: [{ text: "x" }, { hex: "7b2274797065223a22ff227d0a" }, ...ok("never")] },
  unterminated: { steps: [{ text: "x" }, { raw: '{"type":"result"', lf: false }] },
  crash: { steps: [{ text: "Starting." }, { stderr: "\u001b[31mError: something broke\u001b[0m\n" }, { exit: 1 }] },
  hang: { steps: [{ text: "Thinking forever." }, { grandchild: "" }, { hang: true, ignoreTerm: false }] },
  "hang-hard": { steps: [{ text: "Ignoring TERM." }, { hang: true, ignoreTerm: true }] },
  linger: { steps: [...ok("Done, but I stay."), { hang: true, ignoreTerm: false }] },
  stall: { steps: [{ text: "Thinking, then silence." }, { grandchild: "" }, { sleep: 60_000 }, ...ok("too late")] },
  loop: {
    steps: [
      // Paced, as a real agent is: the loop is caught mid-run, before any result.
      ...Array.from({ length: 8 }, () => [
        { tool: { name: "Read", input: { file_path: "same.txt" }, result: "same content" } },
        { sleep: 40 },
      ]).flat(),
      // Long enough that a loaded machine still sees the loop before the result.
      { sleep: 2_000 },
      ...ok("never reached"),
    ],
  },
  "slow-tokens": {
    steps: [{ text: "one" }, { sleep: 300 }, { text: "two" }, { sleep: 300 }, { text: "three" }, { sleep: 300 }, ...ok("done")],
  },
  "self-kill": { steps: [{ text: "Going down." }, { signal: "SIGKILL" }] },
  /** An envelope expected: forgotten in the first turn, given when resumed (a nudge). */
  "envelope-late": {
    steps: ok("Done, I changed nothing."),
    resumed: ok('```json\n{"status":"success","summary":"Changed nothing.","changed_files":[]}\n```'),
  },
  /** An envelope expected and never given, resumed or not. */
  "envelope-never": { steps: ok("Done, I changed nothing."), resumed: ok("Still no envelope, sorry.") },
};
