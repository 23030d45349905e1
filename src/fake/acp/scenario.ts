// The fake ACP agent's scenario language: what one `session/prompt` does, step
// by step. Validated by zod so a typo in a test's scenario fails loudly.
import { z } from "zod";

const Kind = z.enum(["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]);

export const AcpStepSchema = z.union([
  /** Agent text, in two message chunks. */
  z.strictObject({ text: z.string() }),
  /** A tool call that runs without asking: pending, then completed (or failed). */
  z.strictObject({
    tool: z.strictObject({
      kind: Kind.default("read"),
      title: z.string().default("Read notes.txt"),
      path: z.string().optional(),
      failed: z.boolean().default(false),
    }),
  }),
  /**
   * A tool call that asks first (session/request_permission); allowed: the file
   * `path` (relative to the session's folder, not normalised: the OS resolves it;
   * or a file:// URI) is written; rejected: the call fails. `locations`: sent
   * verbatim instead of the path; `kind`: any string (a hostile agent's).
   */
  z.strictObject({
    permission: z.strictObject({
      kind: z.string().optional().default("edit"),
      title: z.string().default("Writing to made-by-fake.txt"),
      path: z.string().default("made-by-fake.txt"),
      locations: z.array(z.string()).optional(),
    }),
  }),
  /** A usage_update: the context window and, with `cost`, the session's running cost in USD. */
  z.strictObject({
    usage: z.strictObject({
      used: z.number().int().nonnegative().default(1000),
      size: z.number().int().positive().default(200_000),
      cost: z.number().nonnegative().optional(),
    }),
  }),
  z.strictObject({ plan: z.array(z.string()) }),
  /** Asks the client to read this file (fs/read_text_file; a path relative to the session's folder, or absolute). */
  z.strictObject({ read: z.string() }),
  /** Wait for session/cancel, then answer the prompt `cancelled`; with `ignoreCancel`, never answer. */
  z.strictObject({ hang: z.literal(true), ignoreCancel: z.boolean().default(false) }),
  /** Kill itself with SIGKILL mid-prompt. */
  z.strictObject({ crash: z.literal(true) }),
  /** A line written verbatim (a malformed message). */
  z.strictObject({ raw: z.string() }),
  z.strictObject({ stderr: z.string() }),
  z.strictObject({ sleep: z.number().int().nonnegative() }),
  /** The prompt fails with this JSON-RPC error. */
  z.strictObject({ error: z.strictObject({ code: z.number().int(), message: z.string() }) }),
  /** The prompt's stopReason (default end_turn after the last step). */
  z.strictObject({ stop: z.string() }),
]);
export type AcpStep = z.infer<typeof AcpStepSchema>;

export const AcpScenarioSchema = z.strictObject({
  steps: z.array(AcpStepSchema),
  /** Played instead of `steps` after a session/load. */
  resumed: z.array(AcpStepSchema).optional(),
  /** Advertise loadSession (default true). */
  loadSession: z.boolean().default(true),
  /**
   * Session modes, as claude-agent-acp and gemini advertise them: `current` at
   * session/new, switched by session/set_mode; a `permission` step asks only in
   * a mode of `asks`, and in any other runs without asking (as "auto" and "yolo" do).
   */
  modes: z.strictObject({ current: z.string(), available: z.array(z.string()), asks: z.array(z.string()) }).optional(),
  /** The prompt's usage in its response, as opencode sends it. */
  tokens: z.strictObject({ input: z.number().int().nonnegative(), output: z.number().int().nonnegative() }).optional(),
});
export type AcpScenario = z.infer<typeof AcpScenarioSchema>;

const done = (text: string) => [{ text }];

export const ACP_SCENARIOS: Record<string, z.input<typeof AcpScenarioSchema>> = {
  text: { steps: done("Hello from the fake ACP agent."), tokens: { input: 1200, output: 7 } },
  tool: {
    steps: [
      { text: "Let me look." },
      { tool: { kind: "read", title: "Read notes.txt", path: "notes.txt" } },
      { plan: ["look", "answer"] },
      { text: "All done." },
    ],
  },
  permission: {
    steps: [{ permission: { kind: "edit", title: "Writing to made-by-fake.txt", path: "made-by-fake.txt" } }, { text: "Done." }],
  },
  usage: { steps: [{ text: "Costly." }, { usage: { used: 5000, size: 200_000, cost: 0.0125 } }], tokens: { input: 4000, output: 50 } },
  hang: { steps: [{ text: "Working forever." }, { hang: true }] },
  "hang-hard": { steps: [{ text: "Ignoring cancel." }, { hang: true, ignoreCancel: true }] },
  crash: { steps: [{ text: "Starting." }, { stderr: "fatal: something broke\n" }, { crash: true }] },
  malformed: { steps: [{ text: "Half" }, { raw: "{not json" }, { text: "never read" }] },
  memory: { steps: done("Noted: BLUE."), resumed: done("The word was BLUE.") },
  "no-load": { steps: done("Noted."), loadSession: false },
  /** claude-agent-acp's shape: it starts in "auto", where it asks nothing. */
  modes: {
    steps: [{ permission: { kind: "edit", title: "Writing to made-by-fake.txt", path: "made-by-fake.txt" } }, { text: "Done." }],
    modes: {
      current: "auto",
      available: ["auto", "default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"],
      asks: ["default", "plan", "dontAsk"],
    },
  },
};
