// Scenarios for the fake pi: what the model "answers", step by step. Validated
// by zod so a typo in a test's scenario fails loudly instead of printing nothing.
//
// How steps become messages (the shape of pi 0.73.1's json stream):
// - `thinking` and `text` steps are held and join the next `tool`/`envelope`
//   step's assistant message (one message, several blocks, as in fixture b3);
//   a `text` not followed by a tool call is a message of its own (stopReason stop).
// - consecutive `tool` steps are one turn each, unless a tool step says
//   `parallel: true`: then it joins the previous tool call's message.
// - `error` is one failed model call per `times`; pi's own auto-retry decides
//   what follows (500/429/"overloaded"… are retried, 400 is not), as in pi.
// - a run that ended in failure (final error, aborted) skips the later
//   message steps of that prompt; the other steps (sleep, stderr, exit…) still play.
// - RPC mode (`--mode rpc`): prompt k plays `turns[k]` (the last one repeats),
//   or `steps` when there is no `turns`. `confirm` guards the next tool call
//   with an extension dialog (json mode has no UI: it is refused at once);
//   `writeFile` is a `write` tool call that really writes into pi's cwd; an
//   `abort` command ends a `sleep`, a `hang`, a retry delay or a streaming text
//   (`chunkDelayMs`) as pi's abort does. A `steer` message is queued and given
//   to the model before its next step (a message, a sleep) after the current
//   one; `steered` scripts what the model then does.
import { z } from "zod";

/** Per-message usage. Left out: input 100, output 20, cost 0.00045 (1.5 $/M in, 15 $/M out). */
export const UsageSchema = z.strictObject({
  input: z.number().int().nonnegative().default(100),
  output: z.number().int().nonnegative().default(20),
  cacheRead: z.number().int().nonnegative().default(0),
  cacheWrite: z.number().int().nonnegative().default(0),
  /** Total cost in USD; the per-kind costs are scaled to add up to it. */
  cost: z.number().nonnegative().optional(),
  /** The usage without its `cost` (a release that moved or dropped it): tokens arrive, the cost does not. */
  noCost: z.boolean().default(false),
});
export type ScenarioUsage = z.infer<typeof UsageSchema>;

const ToolStep = z.strictObject({
  /** A pi tool name: read, bash, edit, write (on by default), grep, find, ls (off unless --tools names them). */
  name: z.string().min(1),
  args: z.record(z.string(), z.unknown()).default({}),
  /** The tool's text output; `${cwd}` is replaced by the fake's working directory. */
  result: z.string().default("ok"),
  isError: z.boolean().default(false),
  details: z.record(z.string(), z.unknown()).optional(),
  /** Join the previous tool call's assistant message (parallel calls, ends arrive out of order). */
  parallel: z.boolean().default(false),
});

export const StepSchema = z.union([
  /** `chunkDelayMs` spaces the text's deltas in real time (a slow reply an abort can cut). */
  z.strictObject({ text: z.string(), usage: UsageSchema.optional(), chunkDelayMs: z.number().int().nonnegative().optional() }),
  z.strictObject({ thinking: z.string() }),
  z.strictObject({ tool: ToolStep, usage: UsageSchema.optional() }),
  /** One failed model call (`times` of them in a row): assistant message with stopReason "error". */
  z.strictObject({
    error: z.strictObject({
      status: z.number().int().default(500),
      /** errorMessage; default "<status> standin error <status>". */
      message: z.string().optional(),
      times: z.number().int().positive().default(1),
    }),
  }),
  /** The run is aborted mid-answer: stopReason "aborted", errorMessage "Request was aborted", partial text kept. */
  z.strictObject({ aborted: z.literal(true), partial: z.string().default("") }),
  /** The report_phase tool (needs `-e`): its result details are this object; `invalid` makes it fail validation. */
  z.strictObject({
    envelope: z.record(z.string(), z.unknown()),
    invalid: z.boolean().default(false),
    /** The tool's error text when invalid (default: a pi-style "Validation failed" text). */
    errorText: z.string().optional(),
    /** The short final text message after the tool call. */
    reply: z.string().default("Phase reported."),
    usage: UsageSchema.optional(),
  }),
  /** The observed model ("provider/id") of the following messages, whatever --model said. */
  z.strictObject({ model: z.string().regex(/^[^/]+\/.+$/) }),
  /** A line written verbatim; `lf: false` leaves it unterminated. */
  z.strictObject({ raw: z.string(), lf: z.boolean().default(true) }),
  /** A read tool call whose tool_execution_end line is this many bytes long, written in pieces. */
  z.strictObject({ oversize: z.number().int().positive() }),
  z.strictObject({ stderr: z.string() }),
  z.strictObject({ sleep: z.number().int().nonnegative() }),
  z.strictObject({ exit: z.number().int().min(0).max(255) }),
  /** Kill itself with this signal (a crash agentport did not cause). */
  z.strictObject({ signal: z.enum(["SIGKILL", "SIGSEGV", "SIGABRT"]) }),
  /** Close stdout and live on (the stream ends before the process does). */
  z.strictObject({ closeStdout: z.literal(true) }),
  /** Sleep forever; with `ignoreTerm`, SIGTERM too is ignored (else SIGTERM exits 143, as pi does). In RPC an abort ends it unless `ignoreAbort`. */
  z.strictObject({ hang: z.literal(true), ignoreTerm: z.boolean().default(false), ignoreAbort: z.boolean().default(false) }),
  /** Start a grandchild that sleeps in the same process group, and write its pid to this file ("" = $AGENTPORT_FAKE_PIDFILE). */
  z.strictObject({ grandchild: z.string() }),
  /**
   * An extension's `ctx.ui.confirm(title, message)` in a tool_call hook, guarding the next tool call
   * (asked on its own when no tool call follows). RPC: an extension_ui_request that blocks until
   * answered; json mode: refused at once. Not confirmed: the tool ends isError with `reason`.
   */
  z.strictObject({
    confirm: z.strictObject({
      title: z.string(),
      message: z.string().default(""),
      /** pi's dialog timeout (ms): resolves to "not confirmed" when nobody answers. */
      timeout: z.number().int().positive().optional(),
      reason: z.string().default("Blocked by user"),
    }),
  }),
  /** `sh -c` this command, waited for, its output on stderr: what a bash tool leaves behind (`setsid sleep 1000 &`). */
  z.strictObject({ shell: z.string().min(1) }),
  /** A GET of this URL, as a model call or a web tool would make; the outcome on stderr (`fetch URL: 200`, `fetch URL: failed …`). */
  z.strictObject({ fetch: z.string().url() }),
  /** A `write` tool call that really writes `content` to `path` (relative to pi's cwd). */
  z.strictObject({ writeFile: z.strictObject({ path: z.string().min(1), content: z.string() }), usage: UsageSchema.optional() }),
]);
export type Step = z.infer<typeof StepSchema>;

export const ScenarioSchema = z.strictObject({
  steps: z.array(StepSchema).default([]),
  /** json/text mode: played instead of `steps` when the session already has messages (a nudge, a resume). */
  resumed: z.array(StepSchema).optional(),
  /** json mode: steps played after the prompt's run is over (after its agent_end): a hang, an exit, a crash. */
  after: z.array(StepSchema).default([]),
  /** RPC: the steps of each prompt in turn; prompts past the list replay the last one. */
  turns: z.array(z.array(StepSchema)).optional(),
  /**
   * RPC: what the model does once a `steer` message reaches it (pi gives it after the current step,
   * before the next model call): these steps instead of the rest of the prompt's. Left out: the
   * message is read and ignored, the prompt goes on as scripted.
   */
  steered: z.array(StepSchema).optional(),
  /** RPC: more models set_model accepts ("provider/id"), besides --model and the agent dir's models.json. */
  models: z.array(z.string().regex(/^[^/]+\/.+$/)).default([]),
  /** Behave as if no prompt arrived (the header line only, exit 0), as pi does when the prompt never runs. */
  ignorePrompt: z.boolean().default(false),
  /** The default usage of every successful assistant message. */
  usage: UsageSchema.default({ input: 100, output: 20, cacheRead: 0, cacheWrite: 0, noCost: false }),
  /** Real time slept before each auto-retry (the announced delayMs stays pi's 2000·2^n). */
  retrySleepMs: z.number().int().nonnegative().default(5),
});
export type Scenario = z.infer<typeof ScenarioSchema>;

type ScenarioInput = z.input<typeof ScenarioSchema>;

/** The named scenarios every test and the self-test can ask for. */
export const BUILTIN_SCENARIOS: Record<string, ScenarioInput> = {
  text: { steps: [{ text: "Hello from the fake pi." }] },
  tools: {
    steps: [
      { text: "Let me look." },
      { tool: { name: "read", args: { path: "hello.txt" }, result: "hi from hello.txt\n" } },
      { tool: { name: "bash", args: { command: "echo SECRET=hunter2" }, result: "SECRET=hunter2\n", parallel: true } },
      {
        tool: {
          name: "read",
          args: { path: "missing.txt" },
          result: "ENOENT: no such file or directory, access 'missing.txt'",
          isError: true,
        },
      },
      { text: "The file says hi." },
    ],
  },
  /** bash while --tools leaves it out (fixture b4): run with e.g. `--tools read`. */
  "tool-not-enabled": {
    steps: [
      { tool: { name: "bash", args: { command: "echo should-not-run" }, result: "should-not-run\n" } },
      { text: "I cannot run bash here." },
    ],
  },
  /** 4 attempts, 3 auto-retries, then auto_retry_end{success:false} (fixture c1). */
  "error-500": { steps: [{ error: { status: 500, times: 4 } }] },
  /** One 429, one auto-retry, then an answer (fixture c2). */
  "error-429-then-ok": { steps: [{ error: { status: 429 } }, { text: "Recovered after a retry." }] },
  /** Not retried (fixture c4). */
  "error-400": { steps: [{ error: { status: 400, message: "400 standin bad request" } }] },
  envelope: {
    steps: [
      { tool: { name: "read", args: { path: "hello.txt" }, result: "hi from hello.txt\n" } },
      { envelope: { status: "success", summary: "Read hello.txt.", changed_files: [] } },
    ],
  },
  "envelope-invalid": { steps: [{ envelope: { status: "maybe" }, invalid: true, reply: "The report was rejected." }] },
  aborted: { steps: [{ aborted: true, partial: "Thi" }] },
  "wrong-model": { steps: [{ model: "standin/other-model" }, { text: "Answered by another model." }] },
  hang: { steps: [{ text: "Thinking forever." }, { grandchild: "" }, { hang: true, ignoreTerm: false }] },
  crash: { steps: [{ text: "Starting." }, { stderr: "\u001b[31mError: something broke\u001b[0m\n" }, { exit: 1 }] },
  oversize: { steps: [{ oversize: 9 * 1024 * 1024 }, { text: "Read it." }] },
  "no-prompt": { steps: [], ignorePrompt: true },
  /** An envelope expected: forgotten in the first turn, reported when the session is continued (a nudge). */
  "envelope-late": {
    steps: [{ text: "Done, I changed nothing." }],
    resumed: [{ envelope: { status: "success", summary: "Changed nothing.", changed_files: [] } }],
  },
  /** An envelope expected and never reported. */
  "envelope-never": { steps: [{ text: "Done, I changed nothing." }], resumed: [{ text: "Still no report, sorry." }] },
};
