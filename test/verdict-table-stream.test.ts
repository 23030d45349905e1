// The verdict's truth table for the one-shot stream agents, through the real
// driver with their fakes: codex (`codex exec --json`), gemini (`gemini
// --output-format stream-json`) and opencode (`opencode run --format json`)
// × the state of the stream when it stops × what stops it. The rule and the
// row runner are verdict-rule.ts; claude and pi are verdict-table.test.ts.
// Where a row differs from the rule, the real agent's stream makes it so
// (/work/shared/ground-truth/<agent>-*.md).
import { describe, test } from "bun:test";
import { join } from "node:path";
import type { Verdict } from "../src/core/verdict.ts";
import {
  boxes,
  causeSteps,
  ENVELOPE,
  ENVELOPE_TEXT,
  expectRows,
  flags,
  nextMark,
  parse,
  rowsFor,
  runBinary,
  type Cause,
  type Json,
  type State,
} from "./verdict-rule.ts";

type Agent = "codex" | "gemini" | "opencode";

// ---------------------------------------------------------------- the agents' own rows

// Their envelope is the run's final text, which is final only at the run's
// successful end (codex turn.completed, gemini result success, opencode's
// step_finish stop): "envelope" is that end, and a stop after it changes
// nothing; an envelope in a text the run then fails after was never delivered.
const FINAL_TEXT_ENVELOPE = `
envelope timeout   completed  0 -
envelope stall     completed  0 -
envelope budget    completed  0 -
envelope interrupt completed  0 -
envelope+error none    failed  1 provider_error
envelope+error timeout failed  1 provider_error
envelope+error crash   crashed 1 exited
envelope+error exit    failed  1 provider_error
`;

// opencode's retries leave no record in run's stream, nor a line on stderr: a stop while it retries is a plain stop.
const OPENCODE_RULE = `
${FINAL_TEXT_ENVELOPE}
retrying timeout   timeout    4 stopped
retrying stall     stalled    4 stopped
`;

const OVERRIDES: Record<Agent, ReturnType<typeof parse>> = {
  codex: parse(FINAL_TEXT_ENVELOPE),
  gemini: parse(FINAL_TEXT_ENVELOPE),
  opencode: parse(OPENCODE_RULE),
};

// Which (state, cause) each agent can be put in. A loop needs repeated actions (only "text" has them, as for
// claude; after the run's end nothing more comes). A budget needs tokens: codex and gemini report them only
// with the run's end (turn.completed, result), opencode with each step's finish (a finished tool step, the
// last step), so a budget stop mid-run is theirs only at those points. opencode's retries are invisible: a
// retry it got past is its "text".
const SKIP: Record<Agent, (s: State, c: Cause) => boolean> = {
  codex: (s, c) => (c === "loop" && s !== "text") || (c === "budget" && s !== "result" && s !== "envelope"),
  gemini: (s, c) => (c === "loop" && s !== "text") || (c === "budget" && s !== "result" && s !== "envelope"),
  opencode: (s, c) =>
    s === "recovered" || (c === "loop" && s !== "text") || (c === "budget" && s !== "tool" && s !== "result" && s !== "envelope"),
};

// ---------------------------------------------------------------- scenarios (src/fake/scenario.ts)

const ERROR_500 = "unexpected status 500 Internal Server Error: standin error";

interface Dialect {
  /** Each state's steps; the cause's follow them. */
  states: Record<State, Json[]>;
  /** The same action again and again: what the loop detector stops. */
  loop: Json[];
}

const now = () => new Date().toISOString();

const RETRY_429 = { retry: "exceeded retry limit, last status: 429 Too Many Requests, request id: req_1", max: 5 };

function codex(): Dialect {
  return {
    states: {
      nothing: [],
      header: [],
      text: [{ text: "Let me look." }],
      // codex prints a command as item.started, and item.completed once it ran.
      tool: [
        {
          raw: JSON.stringify({
            type: "item.started",
            item: {
              id: "item_t",
              type: "command_execution",
              command: "/bin/bash -lc 'cat a.txt'",
              aggregated_output: "",
              exit_code: null,
              status: "in_progress",
            },
          }),
        },
      ],
      retrying: [RETRY_429],
      recovered: [RETRY_429, { text: "Recovered." }],
      result: [{ text: "Done." }, { done: true }],
      // With --output-schema codex's answer is the bare JSON (ground truth §5).
      envelope: [{ text: JSON.stringify(ENVELOPE) }, { done: true }],
      "envelope+error": [
        { text: JSON.stringify(ENVELOPE) },
        { raw: JSON.stringify({ type: "error", message: ERROR_500 }) },
        { raw: JSON.stringify({ type: "turn.failed", error: { message: ERROR_500 } }) },
      ],
    },
    loop: Array.from({ length: 4 }, () => ({ tool: { name: "shell", input: { command: "cat same.txt" }, result: "same" } })),
  };
}

const GEMINI_RETRY_429 = {
  stderr: "Attempt 1 failed: Resource has been exhausted (e.g. check quota).\nSuggested retry after 1s.. Retrying after 5408ms...\n",
};

function gemini(): Dialect {
  const stats = { total_tokens: 0, input_tokens: 0, output_tokens: 0, cached: 0, input: 0, duration_ms: 1, tool_calls: 0, models: {} };
  return {
    states: {
      nothing: [],
      header: [],
      text: [{ text: "Let me look." }],
      // gemini prints tool_use when the call starts, tool_result when it is done.
      tool: [
        {
          raw: JSON.stringify({
            type: "tool_use",
            timestamp: now(),
            tool_name: "read_file",
            tool_id: "read_file__read_file_1_0",
            parameters: { file_path: "a.txt" },
          }),
        },
      ],
      // Its retries are announced on stderr only; a 429's, as gemini 0.61.0 words it (fixtures/gemini/c-errors.ratelimit).
      retrying: [GEMINI_RETRY_429],
      recovered: [GEMINI_RETRY_429, { text: "Recovered." }],
      result: [{ text: "Done." }, { done: true }],
      envelope: [{ text: ENVELOPE_TEXT }, { done: true }],
      "envelope+error": [
        { text: ENVELOPE_TEXT },
        {
          raw: JSON.stringify({
            type: "result",
            timestamp: now(),
            status: "error",
            error: { type: "unknown", message: `[API Error: ${ERROR_500}]` },
            stats,
          }),
        },
      ],
    },
    loop: Array.from({ length: 4 }, () => ({ tool: { name: "read_file", input: { file_path: "same.txt" }, result: "same" } })),
  };
}

function opencode(): Dialect {
  // opencode names the session in every record; a line of our own carries an id like its own.
  const session = `ses_${crypto.randomUUID().replace(/-/g, "").slice(0, 26)}`;
  const record = (type: string, body: Json) => ({ raw: JSON.stringify({ type, timestamp: Date.now(), sessionID: session, ...body }) });
  const stepStart = record("step_start", { part: { id: "prt_table0", messageID: "msg_table0", sessionID: session, type: "step-start" } });
  return {
    states: {
      nothing: [],
      // A step opens with the model request; a hung request shows only that.
      header: [stepStart],
      text: [{ text: "Let me look." }],
      // run json prints a tool only once it is done: the state is a tool step finished (tool-calls), the next not yet.
      tool: [{ tool: { name: "read", input: { filePath: "a.txt" }, result: "contents" } }],
      // Retries are invisible: an open step and silence; one it got past is the text state.
      retrying: [stepStart],
      recovered: [],
      result: [{ text: "Done." }, { done: true }],
      envelope: [{ text: ENVELOPE_TEXT }, { done: true }],
      "envelope+error": [
        { text: ENVELOPE_TEXT },
        record("error", { error: { name: "APIError", data: { message: ERROR_500, statusCode: 500, isRetryable: true } } }),
      ],
    },
    // opencode's own loop: a stream cut before its finish reason, asked again at once, forever.
    loop: [{ cut: "This stre" }],
  };
}

const DIALECTS: Record<Agent, () => Dialect> = { codex, gemini, opencode };

// What the verdict's summary shows of each state, so that a row whose fake never got there fails.
type Seen = (summary: Verdict["summary"], verdict: Verdict) => boolean;
const n = (value: unknown): number => (typeof value === "number" ? value : 0);
const REACHED: Record<Agent, Record<State, Seen>> = {
  codex: {
    nothing: (s) => n(s.records) === 0,
    header: (s) => s.thread_id !== undefined && n(s.agent_messages) + n(s.tool_calls) === 0,
    text: (s) => n(s.agent_messages) > 0,
    tool: (s) => n(s.tool_calls) > 0,
    retrying: (s) => n(s.api_retries) > 0,
    recovered: (s) => n(s.api_retries) > 0 && n(s.agent_messages) > 0,
    // codex's tokens come only with turn.completed.
    result: (_, v) => v.tokens !== null,
    envelope: (_, v) => v.tokens !== null,
    "envelope+error": (s) => s.api_error_status === 500,
  },
  gemini: {
    nothing: (s) => n(s.records) === 0,
    header: (s) => n(s.records) > 0 && n(s.text_deltas) + n(s.tool_calls) === 0,
    text: (s) => n(s.text_deltas) > 0,
    tool: (s) => n(s.tool_calls) > 0,
    // Announced on stderr only: the fault the stop was classified from.
    retrying: (_, v) => v.fault?.kind === "rate_limit",
    recovered: (s) => n(s.text_deltas) > 0,
    result: (s) => s.result_status === "success",
    envelope: (s) => s.result_status === "success",
    "envelope+error": (s) => s.result_status === "error",
  },
  opencode: {
    nothing: (s) => n(s.records) === 0,
    header: (s) => n(s.steps) === 1 && n(s.records) === 1,
    text: (s) => n(s.steps) > 0 && n(s.records) > 1,
    tool: (s) => n(s.tool_calls) > 0,
    retrying: (s) => n(s.steps) === 1 && n(s.records) === 1,
    recovered: () => false,
    result: (s) => s.last_finish_reason === "stop",
    envelope: (s) => s.last_finish_reason === "stop",
    "envelope+error": (s) => s.error_name === "APIError",
  },
};

function scenario(agent: Agent, state: State, cause: Cause, mark: string): Json {
  const d = DIALECTS[agent]();
  return { header: state !== "nothing", steps: [...d.states[state], ...causeSteps(cause, d.loop, mark)] };
}

// ---------------------------------------------------------------- the rows

const boxOf = boxes();
const BIN_FLAG: Record<Agent, string> = { codex: "--codex-bin", gemini: "--gemini-bin", opencode: "--opencode-bin" };

function run(agent: Agent, state: State, cause: Cause) {
  const b = boxOf(agent);
  const mark = nextMark();
  // gemini refuses a folder it does not trust (exit 55); the table's project is trusted.
  const env = {
    ...b.env,
    GEMINI_CLI_TRUST_WORKSPACE: "true",
    AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario(agent, state, cause, mark)),
  };
  const args = ["run", "--agent", agent, BIN_FLAG[agent], join(b.bin, `fake-${agent}`), ...flags(state, cause)];
  return runBinary(`${agent} ${state} ${cause}`, b, args, env, cause, mark);
}

const AGENTS: Agent[] = ["codex", "gemini", "opencode"];
const ROWS = rowsFor(AGENTS, OVERRIDES, SKIP);

describe(`the verdict truth table: codex, gemini, opencode (${ROWS.length} rows)`, () => {
  test("every row through the real driver: status, ok, exit code, failure kind", async () => {
    await expectRows(
      ROWS,
      8,
      (row) => run(row.agent, row.state, row.cause),
      (row, verdict) => REACHED[row.agent][row.state](verdict.summary, verdict),
    );
  }, 240_000);
});
