// The verdict's truth table, through the real driver with the fake agents:
// for each agent and mode (claude; pi json in the 0.73.1 and 0.85 dialects;
// a pi RPC turn) × the state of the stream when it stops × what stops it,
// the expected status, ok, exit code and failure kind. The rule it encodes is
// README "The verdict rule"; the judge is src/core/judge.ts.
//
// Rows run concurrently (each in its own state folder); the slow ones wait
// for a 1.5 s timeout or a 1.2 s stall (long enough that a loaded machine
// reaches the row's state first).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { writeExtension } from "../src/agents/pi-extension.ts";
import { newSessionFile } from "../src/agents/pi-run.ts";
import type { FailureKind } from "../src/core/failure.ts";
import { PI_FLAGS, type PiCapabilities, type PiFlag } from "../src/core/pi/capabilities.ts";
import type { ProgressEvent } from "../src/core/progress.ts";
import { compileSchema, defaultEnvelopeJsonSchema } from "../src/core/envelope.ts";
import { exitCodeFor, VerdictSchema, type Status, type Verdict } from "../src/core/verdict.ts";
import { PiRpcClient, PiRpcError } from "../src/rpc/client.ts";
import { BIN, tempDir } from "./helpers.ts";

type Json = Record<string, unknown>;
type Agent = "claude" | "pi-0.73.1" | "pi-0.85" | "pi-rpc";
type State = "nothing" | "header" | "text" | "tool" | "retrying" | "result" | "envelope" | "envelope+error";
type Cause = "none" | "timeout" | "stall" | "loop" | "budget" | "interrupt" | "crash" | "exit" | "closed";

interface Expected {
  status: Status;
  exit: number;
  kind: FailureKind | null;
  /** summary.warning_kind: the trouble after a delivered envelope. */
  warning?: FailureKind;
}

// ---------------------------------------------------------------- the table
//
// state × cause → status exit kind [warning]. "*" rows hold for every agent;
// an agent's own row overrides. A cause after the run finished (a result, an
// agent_end) changes nothing, except a crash or a non-zero exit after the
// result; a valid envelope wins over everything that comes after it.
const RULE = `
nothing  none      failed     1 no_result
nothing  timeout   timeout    4 stopped
nothing  stall     stalled    4 stopped
nothing  interrupt aborted  130 stopped
nothing  crash     crashed    1 exited
nothing  exit      failed     1 no_result
nothing  closed    failed     1 no_result
header   none      failed     1 no_result
header   timeout   timeout    4 stopped
header   stall     stalled    4 stopped
header   interrupt aborted  130 stopped
header   crash     crashed    1 exited
header   exit      failed     1 no_result
header   closed    failed     1 no_result
text     none      failed     1 no_result
text     timeout   timeout    4 stopped
text     stall     stalled    4 stopped
text     loop      looping    4 stopped
text     budget    over_budget 4 stopped
text     interrupt aborted  130 stopped
text     crash     crashed    1 exited
text     exit      failed     1 no_result
text     closed    failed     1 no_result
tool     none      failed     1 no_result
tool     timeout   timeout    4 stopped
tool     stall     stalled    4 stopped
tool     budget    over_budget 4 stopped
tool     interrupt aborted  130 stopped
tool     crash     crashed    1 exited
tool     exit      failed     1 no_result
tool     closed    failed     1 no_result
retrying timeout   timeout    5 stopped
retrying stall     stalled    5 stopped
result   none      completed  0 -
result   timeout   completed  0 -
result   stall     completed  0 -
result   budget    completed  0 -
result   interrupt completed  0 -
result   crash     crashed    1 exited
result   exit      failed     1 exited
result   closed    completed  0 -
envelope none      completed  0 -
envelope timeout   completed  0 - stopped
envelope stall     completed  0 - stopped
envelope loop      completed  0 - stopped
envelope budget    completed  0 - stopped
envelope interrupt completed  0 - stopped
envelope crash     completed  0 - exited
envelope exit      completed  0 - exited
envelope closed    completed  0 -
envelope+error none    completed 0 - provider_error
envelope+error timeout completed 0 - provider_error
envelope+error crash   completed 0 - exited
envelope+error exit    completed 0 - provider_error
`;

// pi: an exit or a closed stdout inside the run, after the envelope, leaves the run without its agent_end.
const PI_ENVELOPE_EXIT = `
envelope exit      completed  0 - no_result
envelope closed    completed  0 - no_result
`;

// pi runs a prompt to its agent_end by itself: a text or a tool call with nothing after it is a whole run.
const PI_RULE = `
header   none      failed     1 empty_answer
text     none      completed  0 -
tool     none      completed  0 -
${PI_ENVELOPE_EXIT}`;

// An RPC turn: no header; a process that ends mid-turn fails the turn; a cause after the turn's end is the next turn's.
const RPC_RULE = `
nothing  none      failed     1 empty_answer
text     none      completed  0 -
tool     none      completed  0 -
${PI_ENVELOPE_EXIT}`;

function parse(table: string): Map<string, Expected> {
  const rows = new Map<string, Expected>();
  for (const line of table.trim().split("\n")) {
    const [state, cause, status, exit, kind, warning] = line.trim().split(/\s+/);
    rows.set(`${state} ${cause}`, { status: status as Status, exit: Number(exit), kind: kind === "-" ? null : (kind as FailureKind), ...(warning ? { warning: warning as FailureKind } : {}) });
  }
  return rows;
}

// claude's envelope is in its result: a stop after it comes after the run's end, and leaves no warning.
const CLAUDE_RULE = `
envelope timeout   completed  0 -
envelope stall     completed  0 -
envelope budget    completed  0 -
envelope interrupt completed  0 -
`;

const BASE = parse(RULE);
const OVERRIDES: Record<Agent, Map<string, Expected>> = {
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
  "pi-0.73.1": (s, c) => s === "nothing" || (c === "loop" && s !== "text" && s !== "envelope") || (c === "budget" && (s === "header" || s === "result")),
  "pi-0.85": (s, c) => s === "nothing" || (c === "loop" && s !== "text" && s !== "envelope") || (c === "budget" && (s === "header" || s === "result")),
  "pi-rpc": (s, c) => s === "header" || s === "result" || c === "closed" || (c === "loop" && s !== "text" && s !== "envelope") || (c === "budget" && s === "nothing"),
};

// ---------------------------------------------------------------- scenarios

const ENVELOPE = { status: "success", summary: "Did it.", changed_files: [] };
const MARK = "STATE-REACHED";

function claudeScenario(state: State, cause: Cause, mark: string): Json {
  const stateSteps: Record<State, Json[]> = {
    nothing: [],
    header: [],
    text: [{ text: "Let me look." }],
    tool: [{ raw: JSON.stringify({ type: "assistant", message: { id: "m_tool", content: [{ type: "tool_use", id: "t1", name: "Read", input: { file_path: "a.txt" } }], usage: { input_tokens: 100, output_tokens: 5 } } }) }],
    retrying: [{ retry: { status: 429, error: "rate_limit", max: 10 } }],
    // The tokens arrive with the result only: a budget stop then comes after the run's end, never racing it.
    result: [{ result: { text: "Done." } }],
    envelope: [{ result: { text: `Done.\n\`\`\`json\n${JSON.stringify(ENVELOPE)}\n\`\`\`` } }],
    "envelope+error": [],
  };
  const loop = Array.from({ length: 4 }, () => ({ tool: { name: "Read", input: { file_path: "same.txt" }, result: "same" } }));
  return { noInit: state === "nothing", steps: [...stateSteps[state], ...causeSteps(cause, loop, mark)] };
}

function causeSteps(cause: Cause, loop: Json[], mark: string): Json[] {
  switch (cause) {
    case "none":
      return [];
    case "timeout":
    case "stall":
    case "budget":
      return [{ hang: true }];
    case "loop":
      return [...loop, { hang: true }];
    case "interrupt":
      return [{ stderr: `${mark}\n` }, { hang: true }];
    case "crash":
      return [{ signal: "SIGKILL" }];
    case "exit":
      return [{ exit: 1 }];
    case "closed":
      return [{ closeStdout: true }, { sleep: 300 }];
  }
}

type PiScenario = { steps: Json[]; after: Json[]; retrySleepMs?: number; usage?: Json };

function piSteps(state: State, cause: Cause, mark = MARK): PiScenario {
  const loop = Array.from({ length: 4 }, () => ({ tool: { name: "read", args: { path: "same.txt" }, result: "same" } }));
  // Over budget: messages cost nothing until the cause's own message, so the stop comes after the state.
  if (cause === "budget") return { ...piState(state, [{ text: "Spending.", usage: { input: 500, output: 10 } }, { hang: true }]), usage: { input: 0, output: 0 } };
  return piState(state, causeSteps(cause, loop, mark));
}

function piState(state: State, steps: Json[]): PiScenario {
  const toolInFlight = [
    { raw: JSON.stringify({ type: "message_end", message: { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" } }], provider: "standin", model: "standin-model", stopReason: "toolUse", usage: { input: 100, output: 5, cacheRead: 0, cacheWrite: 0, cost: { total: 0.0001 } } } }) },
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
    case "result":
      return { steps: [{ text: "Done." }], after: steps };
    case "envelope":
      return { steps: [{ envelope: ENVELOPE }, ...steps], after: [] };
    case "envelope+error":
      return { steps: [{ envelope: ENVELOPE }, { error: { status: 500, times: 4 } }, ...steps], after: [] };
  }
}

function flags(state: State, cause: Cause): string[] {
  const f: string[] = [];
  if (state === "envelope" || state === "envelope+error") f.push("--envelope");
  if (cause === "timeout") f.push("--timeout", "1.5");
  if (cause === "stall") f.push("--stall", "1.2");
  if (cause === "loop") f.push("--loop-repeat", "3");
  if (cause === "budget") f.push("--max-tokens", "1", "--budget-grace", "0");
  return f;
}

// ---------------------------------------------------------------- running a row

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

interface Box {
  root: string;
  bin: string;
  env: Record<string, string>;
}

// One state folder per agent and dialect (pi's probe is cached by the binary's path, not its dialect).
const boxes = new Map<string, Box>();
function boxFor(agent: Agent): Box {
  let b = boxes.get(agent);
  if (b === undefined) {
    b = box();
    boxes.set(agent, b);
  }
  return b;
}

function box(): Box {
  const root = realpathSync(tempDir("agentport-table-"));
  made.push(root);
  const bin = join(root, "bin");
  for (const d of [bin, join(root, "home"), join(root, "pi-agent"), join(root, "proj", ".git")]) mkdirSync(d, { recursive: true });
  symlinkSync(BIN, join(bin, "fake-pi"));
  symlinkSync(BIN, join(bin, "fake-claude"));
  writeExtension(join(root, "ext"));
  return {
    root,
    bin,
    env: { ...(process.env as Record<string, string>), NO_COLOR: "1", HOME: join(root, "home"), PI_CODING_AGENT_DIR: join(root, "pi-agent"), AGENTPORT_HOME: join(root, "state"), AGENTPORT_CONFIG: "", AGENTPORT_GATEWAY: "" },
  };
}

/** Poll the run folders until the agent's stderr shows the row's marker (the state is reached). */
async function waitForMark(state: string, mark: string, deadline = performance.now() + 20_000): Promise<void> {
  const runs = join(state, "runs");
  while (performance.now() < deadline) {
    if (existsSync(runs)) {
      for (const dir of readdirSync(runs, { recursive: true }) as string[]) {
        const file = join(runs, dir);
        if (file.endsWith("stderr.log") && readFileSync(file, "utf8").includes(mark)) return;
      }
    }
    await Bun.sleep(50);
  }
}

let marks = 0;

async function runCli(agent: Exclude<Agent, "pi-rpc">, state: State, cause: Cause): Promise<{ code: number; verdict: Verdict }> {
  const b = boxFor(agent);
  const mark = `${MARK}-${++marks}`;
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
  const proc = Bun.spawn([BIN, ...args, "--json", "--progress", "off", ...flags(state, cause), "go"], { cwd: join(b.root, "proj"), env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  if (cause === "interrupt") void waitForMark(env.AGENTPORT_HOME as string, mark).then(() => proc.kill("SIGINT"));
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  try {
    return { code, verdict: VerdictSchema.parse(JSON.parse(stdout)) };
  } catch {
    throw new Error(`${agent} ${state} ${cause}: no verdict (exit ${code}): ${stdout.slice(0, 200)} / ${stderr.slice(0, 400)}`);
  }
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
      state === "nothing" ? e.kind === "started" : state === "text" ? e.kind === "assistant_text" : state === "tool" ? e.kind === "tool_started" : e.kind === "tool_finished" && e.tool === "report_phase";
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
    turnTimeoutMs: cause === "timeout" ? 1_500 : undefined,
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

const AGENTS: Agent[] = ["claude", "pi-0.73.1", "pi-0.85", "pi-rpc"];
const STATES: State[] = ["nothing", "header", "text", "tool", "retrying", "result", "envelope", "envelope+error"];
const CAUSES: Cause[] = ["none", "timeout", "stall", "loop", "budget", "interrupt", "crash", "exit", "closed"];

interface Row {
  agent: Agent;
  state: State;
  cause: Cause;
  expected: Expected;
}

const ROWS: Row[] = [];
for (const agent of AGENTS) {
  for (const state of STATES) {
    for (const cause of CAUSES) {
      const key = `${state} ${cause}`;
      const expected = OVERRIDES[agent].get(key) ?? BASE.get(key);
      if (expected === undefined || SKIP[agent](state, cause)) continue;
      ROWS.push({ agent, state, cause, expected });
    }
  }
}

/** At most `n` rows at once: the machine is shared. */
async function pool<T, R>(items: T[], n: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await work(items[i] as T);
      }
    }),
  );
  return out;
}

describe(`the verdict truth table (${ROWS.length} rows)`, () => {
  test("every row through the real driver: status, ok, exit code, failure kind", async () => {
    const results = await pool(ROWS, 10, async (row) => {
      try {
        const { code, verdict } = row.agent === "pi-rpc" ? await runRpc(row.state, row.cause) : await runCli(row.agent, row.state, row.cause);
        return { row, code, verdict, error: null as string | null };
      } catch (error) {
        return { row, code: -1, verdict: null, error: String((error as Error).message) };
      }
    });
    const wrong: string[] = [];
    for (const { row, code, verdict, error } of results) {
      const name = `${row.agent} · ${row.state} · ${row.cause}`;
      if (verdict === null) {
        wrong.push(`${name}: ${error}`);
        continue;
      }
      const e = row.expected;
      const got = { status: verdict.status, ok: verdict.ok, exit: code, kind: verdict.failure?.kind ?? null, warning: verdict.summary.warning_kind };
      const want = { status: e.status, ok: e.status === "completed", exit: e.exit, kind: e.kind, warning: e.warning };
      if (JSON.stringify(got) !== JSON.stringify(want)) wrong.push(`${name}: want ${JSON.stringify(want)}, got ${JSON.stringify(got)} (${verdict.failure?.message ?? ""})`);
      // Every stop names its cause; every failure of the environment says so.
      if (verdict.failure?.kind === "stopped" && verdict.failure.cause === undefined) wrong.push(`${name}: a stop without its cause`);
      if (e.exit === 5 && !verdict.env_fault) wrong.push(`${name}: exit 5 without env_fault`);
    }
    expect(wrong).toEqual([]);
    expect(results.length).toBe(ROWS.length);
  }, 240_000);
});
