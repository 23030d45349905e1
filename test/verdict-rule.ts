// The verdict's truth table, shared by its test files: the rule every agent
// follows (README "The verdict rule"; the judge is src/core/judge.ts), the
// row builder, the state folders, the run of one row through the compiled
// binary and the check of its verdict. Each agent family's file
// (verdict-table*.test.ts) says how its fakes reach each state, where its
// real stream makes it differ from the rule, and which rows it cannot have.
import { afterAll, expect } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import type { FailureKind } from "../src/core/failure.ts";
import { VerdictSchema, type Status, type Verdict } from "../src/core/verdict.ts";
import { BIN, tempDir } from "./helpers.ts";

export type Json = Record<string, unknown>;
export type State = "nothing" | "header" | "text" | "tool" | "retrying" | "recovered" | "result" | "envelope" | "envelope+error";
export type Cause = "none" | "timeout" | "stall" | "loop" | "budget" | "interrupt" | "crash" | "exit" | "closed";

// "recovered": a provider retry the run got past (a text came after it), so a later stop or failure is not the provider's.
export const STATES: State[] = ["nothing", "header", "text", "tool", "retrying", "recovered", "result", "envelope", "envelope+error"];
export const CAUSES: Cause[] = ["none", "timeout", "stall", "loop", "budget", "interrupt", "crash", "exit", "closed"];

export interface Expected {
  status: Status;
  exit: number;
  kind: FailureKind | null;
  /** summary.warning_kind: the trouble after a delivered envelope. */
  warning?: FailureKind;
}

// ---------------------------------------------------------------- the rule
//
// state × cause → status exit kind [warning]. These rows hold for every agent;
// an agent's own rows override. A cause after the run finished (a result, an
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
recovered none      failed     1 no_result
recovered timeout   timeout    4 stopped
recovered stall     stalled    4 stopped
recovered interrupt aborted  130 stopped
recovered crash     crashed    1 exited
recovered exit      failed     1 no_result
recovered closed    failed     1 no_result
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

/** `state cause status exit kind [warning]` lines, keyed by `state cause`. */
export function parse(table: string): Map<string, Expected> {
  const rows = new Map<string, Expected>();
  for (const line of table.trim().split("\n")) {
    const [state, cause, status, exit, kind, warning] = line.trim().split(/\s+/);
    rows.set(`${state} ${cause}`, {
      status: status as Status,
      exit: Number(exit),
      kind: kind === "-" ? null : (kind as FailureKind),
      ...(warning ? { warning: warning as FailureKind } : {}),
    });
  }
  return rows;
}

const BASE = parse(RULE);

export interface Row<A extends string> {
  agent: A;
  state: State;
  cause: Cause;
  expected: Expected;
}

/** Every (state, cause) the rule or the agent's overrides name, less the ones the agent cannot be put in. */
export function rowsFor<A extends string>(
  agents: readonly A[],
  overrides: Record<A, Map<string, Expected>>,
  skip: Record<A, (s: State, c: Cause) => boolean>,
): Row<A>[] {
  const rows: Row<A>[] = [];
  for (const agent of agents) {
    for (const state of STATES) {
      for (const cause of CAUSES) {
        const key = `${state} ${cause}`;
        const expected = overrides[agent].get(key) ?? BASE.get(key);
        if (expected === undefined || skip[agent](state, cause)) continue;
        rows.push({ agent, state, cause, expected });
      }
    }
  }
  return rows;
}

// ---------------------------------------------------------------- scenarios

export const ENVELOPE = { status: "success", summary: "Did it.", changed_files: [] };
/** The envelope as a final text carries it: a fenced JSON block. */
export const ENVELOPE_TEXT = `Done.\n\`\`\`json\n${JSON.stringify(ENVELOPE)}\n\`\`\``;
export const MARK = "STATE-REACHED";

/** What the fake does after reaching the state, for each cause; `loop` is the agent's own repeated action. */
export function causeSteps(cause: Cause, loop: Json[], mark: string): Json[] {
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

export function flags(state: State, cause: Cause): string[] {
  const f: string[] = [];
  if (state === "envelope" || state === "envelope+error") f.push("--envelope");
  // Other rows get a backstop: a row whose state or cause never comes fails instead of hanging the table.
  f.push("--timeout", cause === "timeout" ? "1.5" : "30");
  if (cause === "stall") f.push("--stall", "1.2");
  if (cause === "loop") f.push("--loop-repeat", "3");
  if (cause === "budget") f.push("--max-tokens", "1", "--budget-grace", "0");
  return f;
}

// ---------------------------------------------------------------- state folders

export interface Box {
  root: string;
  bin: string;
  env: Record<string, string>;
}

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** A state folder with its own home, a git project and every fake agent linked in `bin/`. */
export function box(): Box {
  const root = realpathSync(tempDir("agentport-table-"));
  made.push(root);
  const bin = join(root, "bin");
  for (const d of [bin, join(root, "home"), join(root, "pi-agent"), join(root, "proj", ".git")]) mkdirSync(d, { recursive: true });
  for (const fake of ["fake-pi", "fake-claude", "fake-codex", "fake-gemini", "fake-opencode"]) symlinkSync(BIN, join(bin, fake));
  return {
    root,
    bin,
    env: {
      ...(process.env as Record<string, string>),
      NO_COLOR: "1",
      HOME: join(root, "home"),
      PI_CODING_AGENT_DIR: join(root, "pi-agent"),
      AGENTPORT_HOME: join(root, "state"),
      AGENTPORT_CONFIG: "",
      AGENTPORT_GATEWAY: "",
    },
  };
}

/** One state folder per key (an agent, a dialect), made on first use. */
export function boxes(): (key: string) => Box {
  const byKey = new Map<string, Box>();
  return (key) => {
    let b = byKey.get(key);
    if (b === undefined) {
      b = box();
      byKey.set(key, b);
    }
    return b;
  };
}

/** Poll the run folders until the agent's stderr shows the row's marker (the state is reached). */
export async function waitForMark(state: string, mark: string, deadline = performance.now() + 20_000): Promise<void> {
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
/** A marker no other row writes. */
export const nextMark = (): string => `${MARK}-${++marks}`;

/** `agentport run … --json` in the box's project with this scenario; a Ctrl-C once the mark shows for an interrupt. */
export async function runBinary(
  name: string,
  b: Box,
  args: string[],
  env: Record<string, string>,
  cause: Cause,
  mark: string,
): Promise<{ code: number; verdict: Verdict }> {
  const proc = Bun.spawn([BIN, ...args, "--json", "--progress", "off", "go"], {
    cwd: join(b.root, "proj"),
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  if (cause === "interrupt") void waitForMark(env.AGENTPORT_HOME as string, mark).then(() => proc.kill("SIGINT"));
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  try {
    return { code, verdict: VerdictSchema.parse(JSON.parse(stdout)) };
  } catch {
    throw new Error(`${name}: no verdict (exit ${code}): ${stdout.slice(0, 200)} / ${stderr.slice(0, 400)}`);
  }
}

// ---------------------------------------------------------------- running the rows

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

/**
 * Run every row (at most `n` at once) and expect each verdict to be its row's: status, ok, exit code, failure
 * kind, warning; and, with `reached`, that the verdict shows the row's state was reached before the cause.
 */
export async function expectRows<A extends string>(
  rows: Row<A>[],
  n: number,
  run: (row: Row<A>) => Promise<{ code: number; verdict: Verdict }>,
  reached?: (row: Row<A>, verdict: Verdict) => boolean,
): Promise<void> {
  const results = await pool(rows, n, async (row) => {
    try {
      const { code, verdict } = await run(row);
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
    const got = {
      status: verdict.status,
      ok: verdict.ok,
      exit: code,
      kind: verdict.failure?.kind ?? null,
      warning: verdict.summary.warning_kind,
    };
    const want = { status: e.status, ok: e.status === "completed", exit: e.exit, kind: e.kind, warning: e.warning };
    if (JSON.stringify(got) !== JSON.stringify(want))
      wrong.push(
        `${name}: want ${JSON.stringify(want)}, got ${JSON.stringify(got)} (${verdict.failure?.message ?? verdict.summary.warning ?? ""})`,
      );
    // Every stop names its cause; every failure of the environment says so.
    if (verdict.failure?.kind === "stopped" && verdict.failure.cause === undefined) wrong.push(`${name}: a stop without its cause`);
    if (e.exit === 5 && !verdict.env_fault) wrong.push(`${name}: exit 5 without env_fault`);
    if (reached !== undefined && !reached(row, verdict))
      wrong.push(`${name}: the state was not reached: ${JSON.stringify(verdict.summary)}`);
  }
  expect(wrong).toEqual([]);
  expect(results.length).toBe(rows.length);
}
