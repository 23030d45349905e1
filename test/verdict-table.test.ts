// The verdict's truth table for claude and pi, through the real driver with
// the fake agents: claude; pi json in the 0.73.1 and 0.85 dialects; a pi RPC
// turn × the state of the stream when it stops × what stops it, the expected
// status, ok, exit code and failure kind. The rule and the row runner are
// verdict-rule.ts; codex, gemini and opencode are verdict-table-stream.test.ts.
//
// Rows run concurrently (each agent in its own state folder); the slow ones
// wait for a 1.5 s timeout or a 1.2 s stall (long enough that a loaded
// machine reaches the row's state first).
import { describe, test } from "bun:test";
import { join } from "node:path";
import { writeExtension } from "../src/agents/pi/extension.ts";
import { newSessionFile } from "../src/agents/pi/run.ts";
import { PI_FLAGS, type PiCapabilities, type PiFlag } from "../src/core/pi/capabilities.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import { compileSchema, defaultEnvelopeJsonSchema } from "../src/core/envelope.ts";
import { exitCodeFor, type Verdict } from "../src/core/verdict.ts";
import { PiRpcClient, PiRpcError } from "../src/rpc/client.ts";
import {
  boxes,
  causeSteps,
  ENVELOPE,
  ENVELOPE_TEXT,
  expectRows,
  flags,
  MARK,
  nextMark,
  parse,
  rowsFor,
  runBinary,
  type Cause,
  type Json,
  type State,
} from "./verdict-rule.ts";

type Agent = "claude" | "pi-0.73.1" | "pi-0.85" | "pi-rpc";

// pi: an exit or a closed stdout inside the run, after the envelope, leaves the run without its agent_end.
const PI_ENVELOPE_EXIT = `
envelope exit      completed  0 - no_result
envelope closed    completed  0 - no_result
`;

// pi runs a prompt to its agent_end by itself: a text or a tool call with nothing after it is a whole run.
const PI_RULE = `
header   none      failed     1 empty_answer
text     none      completed  0 -
recovered none     completed  0 -
tool     none      completed  0 -
${PI_ENVELOPE_EXIT}`;

// An RPC turn: no header; a process that ends mid-turn fails the turn; a cause after the turn's end is the next turn's.
const RPC_RULE = `
nothing  none      failed     1 empty_answer
text     none      completed  0 -
recovered none     completed  0 -
tool     none      completed  0 -
${PI_ENVELOPE_EXIT}`;

// claude's envelope is in its result: a stop after it comes after the run's end, and leaves no warning.
const CLAUDE_RULE = `
envelope timeout   completed  0 -
envelope stall     completed  0 -
envelope budget    completed  0 -
envelope interrupt completed  0 -
`;

const OVERRIDES: Record<Agent, ReturnType<typeof parse>> = {
  claude: parse(CLAUDE_RULE),
  "pi-0.73.1": parse(PI_RULE),
  "pi-0.85": parse(PI_RULE),
  "pi-rpc": parse(RPC_RULE),
};

// Which (state, cause) each agent can be put in. claude's envelope is its result: "envelope then error" is
// "envelope" × exit. pi json always prints its header: no "nothing". An RPC turn has no header and no
// "after its end"; a loop needs repeated calls, a budget needs tokens (pi spends them inside its run, so
// pi's "result" × budget would race the run's end).
const SKIP: Record<Agent, (s: State, c: Cause) => boolean> = {
  claude: (s, c) => s === "envelope+error" || (c === "loop" && s !== "text") || (c === "budget" && (s === "nothing" || s === "header")),
  "pi-0.73.1": (s, c) =>
    s === "nothing" || (c === "loop" && s !== "text" && s !== "envelope") || (c === "budget" && (s === "header" || s === "result")),
  "pi-0.85": (s, c) =>
    s === "nothing" || (c === "loop" && s !== "text" && s !== "envelope") || (c === "budget" && (s === "header" || s === "result")),
  "pi-rpc": (s, c) =>
    s === "header" ||
    s === "result" ||
    c === "closed" ||
    (c === "loop" && s !== "text" && s !== "envelope") ||
    (c === "budget" && s === "nothing"),
};

// ---------------------------------------------------------------- scenarios

function claudeScenario(state: State, cause: Cause, mark: string): Json {
  const stateSteps: Record<State, Json[]> = {
    nothing: [],
    header: [],
    text: [{ text: "Let me look." }],
    tool: [
      {
        raw: JSON.stringify({
          type: "assistant",
          message: {
            id: "m_tool",
            content: [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "a.txt" } }],
            usage: { input_tokens: 100, output_tokens: 5 },
          },
        }),
      },
    ],
    retrying: [{ retry: { status: 429, error: "rate_limit", max: 10 } }],
    recovered: [{ retry: { status: 429, error: "rate_limit", max: 10 } }, { text: "Recovered." }],
    // The tokens arrive with the result only: a budget stop then comes after the run's end, never racing it.
    result: [{ result: { text: "Done." } }],
    envelope: [{ result: { text: ENVELOPE_TEXT } }],
    "envelope+error": [],
  };
  const loop = Array.from({ length: 4 }, () => ({ tool: { name: "Read", input: { file_path: "same.txt" }, result: "same" } }));
  return { noInit: state === "nothing", steps: [...stateSteps[state], ...causeSteps(cause, loop, mark)] };
}

type PiScenario = { steps: Json[]; after: Json[]; retrySleepMs?: number; usage?: Json };

function piSteps(state: State, cause: Cause, mark = MARK): PiScenario {
  const loop = Array.from({ length: 4 }, () => ({ tool: { name: "read", args: { path: "same.txt" }, result: "same" } }));
  // Over budget: messages cost nothing until the cause's own message, so the stop comes after the state.
  if (cause === "budget")
    return {
      ...piState(state, [{ text: "Spending.", usage: { input: 500, output: 10 } }, { hang: true }]),
      usage: { input: 0, output: 0 },
    };
  return piState(state, causeSteps(cause, loop, mark));
}

function piState(state: State, steps: Json[]): PiScenario {
  const toolInFlight = [
    {
      raw: JSON.stringify({
        type: "message_end",
        message: {
          role: "assistant",
          content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" } }],
          provider: "standin",
          model: "standin-model",
          stopReason: "toolUse",
          usage: { input: 100, output: 5, cacheRead: 0, cacheWrite: 0, cost: { total: 0.0001 } },
        },
      }),
    },
    { raw: JSON.stringify({ type: "tool_execution_start", toolCallId: "c1", toolName: "read", args: { path: "a.txt" } }) },
  ];
  switch (state) {
    case "nothing":
    case "header":
      return { steps, after: [] };
    case "text":
      return { steps: [{ text: "Let me look." }, ...steps], after: [] };
    case "tool":
      return { steps: [...toolInFlight, ...steps], after: [] };
    case "retrying":
      return { steps: [{ error: { status: 429, times: 1 } }, ...steps], after: [], retrySleepMs: 60_000 };
    case "recovered":
      return { steps: [{ error: { status: 429, times: 1 } }, { text: "Recovered." }, ...steps], after: [] };
    case "result":
      return { steps: [{ text: "Done." }], after: steps };
    case "envelope":
      return { steps: [{ envelope: ENVELOPE }, ...steps], after: [] };
    case "envelope+error":
      return { steps: [{ envelope: ENVELOPE }, { error: { status: 500, times: 4 } }, ...steps], after: [] };
  }
}

// ---------------------------------------------------------------- running a row

// One state folder per agent and dialect (pi's probe is cached by the binary's path, not its dialect).
const boxOf = boxes();
const withExtension = new Set<string>();
function boxFor(agent: Agent) {
  const b = boxOf(agent);
  if (!withExtension.has(agent)) writeExtension(join(b.root, "ext"));
  withExtension.add(agent);
  return b;
}

async function runCli(agent: Exclude<Agent, "pi-rpc">, state: State, cause: Cause): Promise<{ code: number; verdict: Verdict }> {
  const b = boxFor(agent);
  const mark = nextMark();
  const env: Record<string, string> = { ...b.env };
  let args: string[];
  if (agent === "claude") {
    env.AGENTPORT_FAKE_SCENARIO = JSON.stringify(claudeScenario(state, cause, mark));
    args = ["run", "--agent", "claude", "--claude-bin", join(b.bin, "fake-claude")];
  } else {
    env.AGENTPORT_FAKE_SCENARIO = JSON.stringify(piSteps(state, cause, mark));
    env.AGENTPORT_FAKE_PI_DIALECT = agent === "pi-0.85" ? "0.85" : "0.73.1";
    args = ["run", "--agent", "pi", "--pi-bin", join(b.bin, "fake-pi"), "--direct", "--model", "standin/standin-model"];
  }
  return runBinary(`${agent} ${state} ${cause}`, b, [...args, ...flags(state, cause)], env, cause, mark);
}

function rpcCaps(): PiCapabilities {
  const flagsOn = Object.fromEntries(PI_FLAGS.map((f) => [f, true])) as Record<PiFlag, boolean>;
  return { version: "0.85.0", flags: flagsOn };
}

const compiled = compileSchema(defaultEnvelopeJsonSchema());
if (!compiled.ok) throw new Error(compiled.error);
const check = compiled.check;

async function runRpc(state: State, cause: Cause): Promise<{ code: number; verdict: Verdict }> {
  const b = boxFor("pi-rpc");
  const { steps, retrySleepMs, usage } = piSteps(state, cause === "interrupt" ? "timeout" : cause);
  const scenario = { turns: [steps], ...(retrySleepMs ? { retrySleepMs } : {}), ...(usage ? { usage } : {}) };
  const env = { ...b.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario), AGENTPORT_FAKE_PI_DIALECT: "0.85" };
  const wantsEnvelope = state === "envelope" || state === "envelope+error";
  const id = crypto.randomUUID();
  const sessions = join(b.root, "sessions");
  let client: PiRpcClient | null = null;
  const onProgress = (e: ProgressEvent) => {
    if (cause !== "interrupt" || client === null) return;
    // Ctrl-C once the state is reached: the turn started, the text began, the tool or the envelope arrived.
    const reached =
      state === "nothing"
        ? e.kind === "started"
        : state === "text" || state === "recovered"
          ? e.kind === "assistant_text"
          : state === "tool"
            ? e.kind === "tool_started"
            : e.kind === "tool_finished" && e.tool === "report_phase";
    if (reached) void client.abort().catch(() => {});
  };
  client = await PiRpcClient.start({
    bin: join(b.bin, "fake-pi"),
    caps: rpcCaps(),
    cwd: join(b.root, "proj"),
    env,
    sessionDir: sessions,
    sessionFile: newSessionFile(sessions, id, join(b.root, "proj")),
    sessionId: id,
    model: "standin/standin-model",
    gateway: "",
    direct: true,
    extensions: wantsEnvelope ? [join(b.root, "ext", "agentport.ts")] : [],
    envelopeTool: wantsEnvelope ? "report_phase" : undefined,
    stderrFile: join(b.root, `stderr-${id}.log`),
    maxLineBytes: 8 * 1024 * 1024,
    commandTimeoutMs: 5_000,
    // Other rows get a backstop, as the CLI rows do (verdict-rule.ts flags).
    turnTimeoutMs: cause === "timeout" ? 1_500 : 30_000,
    stallMs: cause === "stall" ? 1_200 : undefined,
    loopRepeat: cause === "loop" ? 3 : undefined,
    budget: cause === "budget" ? { maxTokens: 1, mode: "enforce", cacheReadWeight: 0.1, graceMs: 0 } : null,
    onProgress,
  });
  try {
    const turn = await client.prompt("go", { envelope: wantsEnvelope ? check : null });
    return { code: turn.exitCode, verdict: turn.verdict };
  } catch (error) {
    const verdict = error instanceof PiRpcError ? error.details.verdict : undefined;
    if (verdict === undefined) throw error;
    return { code: exitCodeFor(verdict), verdict };
  } finally {
    await client.close();
  }
}

// ---------------------------------------------------------------- the rows

// What the verdict's summary shows of each state, so that a row whose fake never got there fails (not yet for
// an RPC turn, whose verdict summary differs).
type Seen = (summary: Verdict["summary"]) => boolean;
const n = (value: unknown): number => (typeof value === "number" ? value : 0);
const CLAUDE_REACHED: Record<State, Seen> = {
  nothing: (s) => n(s.records) === 0,
  header: (s) => n(s.records) > 0 && n(s.tool_calls) + n(s.api_retries) + n(s.results) === 0,
  text: (s) => n(s.records) > 1,
  tool: (s) => n(s.tool_calls) > 0,
  retrying: (s) => n(s.api_retries) > 0,
  recovered: (s) => n(s.api_retries) > 0 && n(s.records) > 2,
  result: (s) => n(s.results) > 0,
  envelope: (s) => n(s.results) > 0,
  "envelope+error": () => false,
};
const PI_REACHED: Record<State, Seen> = {
  nothing: () => false,
  header: (s) => n(s.records) > 0 && n(s.assistant_messages) === 0,
  text: (s) => n(s.assistant_messages) > 0,
  tool: (s) => n(s.tool_calls) > 0,
  retrying: (s) => n(s.assistant_messages) > 0 && s.stop_reason === "error",
  recovered: (s) => n(s.provider_retries) > 0 && n(s.assistant_messages) > 1,
  result: (s) => n(s.agent_ends) > 0,
  envelope: (s) => n(s.tool_calls) > 0,
  "envelope+error": (s) => n(s.tool_calls) > 0 && n(s.assistant_messages) > 1,
};
function reached(agent: Agent, state: State, verdict: Verdict): boolean {
  if (agent === "pi-rpc") return true;
  return (agent === "claude" ? CLAUDE_REACHED : PI_REACHED)[state](verdict.summary);
}

const AGENTS: Agent[] = ["claude", "pi-0.73.1", "pi-0.85", "pi-rpc"];
const ROWS = rowsFor(AGENTS, OVERRIDES, SKIP);

describe(`the verdict truth table: claude and pi (${ROWS.length} rows)`, () => {
  test("every row through the real driver: status, ok, exit code, failure kind", async () => {
    await expectRows(
      ROWS,
      8,
      (row) => (row.agent === "pi-rpc" ? runRpc(row.state, row.cause) : runCli(row.agent, row.state, row.cause)),
      (row, verdict) => reached(row.agent, row.state, verdict),
    );
  }, 240_000);
});
