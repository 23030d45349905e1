// Envelope nudges against the fake agents: one that forgets the envelope once
// and gives it when the session is resumed, one that never gives it; for
// claude, and for pi in both dialects. Each nudge is a phase of kind "nudge".
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { MAX_NUDGES, nudgePrompt, withNudges } from "../src/agents/nudge.ts";
import { isEnvelopeFailure } from "../src/core/failure.ts";
import type { RunOutcome } from "../src/agents/phase.ts";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { agentport, fakeProject, tempDir, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

type World = FakeProject;

function world(dialect: "0.73.1" | "0.85" = "0.73.1"): World {
  const w = fakeProject("agentport-nudge-", { AGENTPORT_FAKE_PI_DIALECT: dialect, AGENTPORT_GATEWAY: "" });
  made.push(w.root);
  return w;
}

const calls = (w: World): string[][] =>
  existsSync(w.log)
    ? readFileSync(w.log, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).argv as string[])
        .filter((argv) => !argv.includes("--version") && !argv.includes("--help"))
    : [];

interface Phase {
  seq: number;
  kind: string;
  status: string;
  failure: string | null;
}

async function run(w: World, agent: "pi" | "claude", scenario: string, extra: string[]) {
  const ran = await agentport(["run", "--agent", agent, "--envelope", "--json", "--progress", "lines", ...extra, "do it"], {
    cwd: w.proj,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: scenario },
  });
  let verdict: Verdict;
  try {
    verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
  } catch {
    throw new Error(`no verdict (exit ${ran.code}): ${ran.stdout.slice(0, 300)} / ${ran.stderr.slice(0, 600)}`);
  }
  const show = await agentport(["show", "--json", verdict.session_id ?? "?"], { cwd: w.proj, env: w.env });
  const phases = (JSON.parse(show.stdout).phases as Phase[]).map(({ seq, kind, status, failure }) => ({ seq, kind, status, failure }));
  return { ...ran, verdict, phases };
}

const CASES = [
  ["claude", "0.73.1"],
  ["pi", "0.73.1"],
  ["pi", "0.85"],
] as const;

describe.each(CASES)("%s (fake pi dialect %s)", (agent, dialect) => {
  // The kind decides; the words are the same for both agents.
  const pre = "";

  test("forgets the envelope once, gives it when nudged: ok, one nudge phase", async () => {
    const w = world(dialect);
    const { code, verdict, phases, stderr } = await run(w, agent, "envelope-late", ["--nudges", "2"]);
    expect(code).toBe(0);
    expect(verdict).toMatchObject({
      ok: true,
      status: "completed",
      envelope: { status: "success", summary: "Changed nothing.", changed_files: [] },
    });
    expect(verdict.summary.nudges).toBe(1);
    expect(phases.map((p) => [p.kind, p.status])).toEqual([
      ["run", "failed"],
      ["nudge", "completed"],
    ]);
    expect(phases[0]?.failure).toStartWith(`${pre}no envelope: `);
    expect(stderr).toContain(`${agent}: the turn ended without its envelope`);
    expect(stderr).toContain("nudge 1 of 2");
    // Tokens and cost are the two turns'.
    expect(verdict.tokens?.input).toBe(agent === "claude" ? 6000 : 300);
    // The nudge continued the same session.
    const [first, second, ...rest] = calls(w);
    expect(rest).toEqual([]);
    const after = (argv: string[] | undefined, flag: string) => argv?.[argv.indexOf(flag) + 1];
    if (agent === "claude") {
      expect(after(first, "--session-id")).toBe(verdict.session_id ?? "?");
      expect(after(second, "--resume")).toBe(verdict.session_id ?? "?");
    } else {
      const flag = dialect === "0.85" ? "--session-id" : "--session";
      expect(after(second, flag)).toBe(after(first, flag) ?? "?");
      expect(second).toContain(flag);
    }
  });

  test("never gives it: N nudges, then 'no envelope after N nudges' (exit 1)", async () => {
    const w = world(dialect);
    const { code, verdict, phases } = await run(w, agent, "envelope-never", ["--nudges", "2"]);
    expect(code).toBe(1);
    expect(verdict.status).toBe("failed");
    expect(verdict.failure?.kind).toBe("envelope_missing");
    expect(verdict.failure?.message).toStartWith(`${pre}no envelope after 2 nudges: `);
    expect(verdict.summary.nudges).toBe(2);
    expect(phases.map((p) => p.kind)).toEqual(["run", "nudge", "nudge"]);
    expect(phases.every((p) => p.status === "failed")).toBe(true);
    expect(phases[2]?.failure).toStartWith(`${pre}no envelope after 2 nudges: `);
    expect(calls(w)).toHaveLength(3);
  });

  test("--nudges 1: one nudge, 'after 1 nudge'", async () => {
    const w = world(dialect);
    const { verdict, phases } = await run(w, agent, "envelope-never", ["--nudges", "1"]);
    expect(verdict.failure?.message).toStartWith(`${pre}no envelope after 1 nudge: `);
    expect(phases).toHaveLength(2);
  });

  test("by default no nudge: the turn fails as it always did", async () => {
    const w = world(dialect);
    const { code, verdict, phases } = await run(w, agent, "envelope-late", []);
    expect(code).toBe(1);
    expect(verdict.failure?.message).toStartWith(`${pre}no envelope: `);
    expect(verdict.summary.nudges).toBeUndefined();
    expect(phases).toHaveLength(1);
    expect(calls(w)).toHaveLength(1);
  });

  test("the model is told about the envelope up front: what to return and the schema, appended to the system prompt", async () => {
    const w = world(dialect);
    await run(w, agent, "envelope-late", []);
    const [first] = calls(w);
    // claude takes it as --append-system-prompt=TEXT (a text that starts with "-" is no flag), pi as two words.
    const at = first?.findIndex((a) => a === "--append-system-prompt" || a.startsWith("--append-system-prompt=")) ?? -1;
    expect(at).toBeGreaterThan(0);
    const given = first?.[at] ?? "";
    const text = given.includes("=") ? given.slice(given.indexOf("=") + 1) : (first?.[at + 1] ?? "");
    expect(text).toContain("The envelope must match this JSON Schema");
    expect(text).toContain('"changed_files"');
    expect(text).toContain(agent === "pi" ? "call the report_phase tool exactly once" : "one fenced ```json block");
  });

  test("a crash is not nudged", async () => {
    const w = world(dialect);
    const { code, phases } = await run(w, agent, "crash", ["--nudges", "3"]);
    expect(code).toBe(1);
    expect(phases).toHaveLength(1);
    expect(calls(w)).toHaveLength(1);
  });
});

test("pi: an invalid envelope is nudged too, and the failure says what was wrong", async () => {
  const w = world();
  const { verdict, phases } = await run(w, "pi", "envelope-invalid", ["--nudges", "1"]);
  expect(verdict.failure?.kind).toBe("envelope_invalid");
  expect(verdict.failure?.message).toStartWith("invalid envelope after 1 nudge: ");
  expect(phases.map((p) => p.kind)).toEqual(["run", "nudge"]);
});

test("the nudge prompt reaches the session: asks only for the envelope", async () => {
  const w = world();
  const { verdict } = await run(w, "pi", "envelope-late", ["--nudges", "1"]);
  const show = JSON.parse((await agentport(["show", "--json", verdict.session_id ?? "?"], { cwd: w.proj, env: w.env })).stdout);
  const session = readFileSync(show.session_file, "utf8");
  expect(session).toContain("Your last turn ended without the required envelope");
  expect(session).toContain("Call the report_phase tool now with the envelope, and nothing else.");
});

describe("the pieces", () => {
  test("only envelope failures are nudged: the kind decides, not the words", () => {
    for (const kind of ["envelope_missing", "envelope_invalid"] as const)
      expect(isEnvelopeFailure({ kind, message: "anything" })).toBe(true);
    for (const kind of ["no_result", "stopped", "exited", "provider_error", "empty_answer"] as const)
      expect(isEnvelopeFailure({ kind, message: "no envelope: x" })).toBe(false);
    expect(isEnvelopeFailure(null)).toBe(false);
  });

  test("the prompts: pi is asked for its tool, claude for a fenced block matching the schema", () => {
    expect(nudgePrompt({ tool: "report_phase" }, { kind: "envelope_missing", message: "no envelope: x" })).toBe(
      "Your last turn ended without the required envelope (no envelope: x). Do not redo the work and do not change any file. Call the report_phase tool now with the envelope, and nothing else.",
    );
    const claude = nudgePrompt({ schema: { type: "object" } }, { kind: "envelope_missing", message: "no envelope: y" });
    expect(claude).toContain("one fenced ```json block matching this JSON Schema");
    expect(claude).toEndWith('{"type":"object"}');
  });

  const missing = { kind: "envelope_missing", message: "no envelope: x" } as const;
  // Each turn's run folder: the nudged verdict is written to the last one's verdict.json.
  const runDir = tempDir("agentport-nudge-");
  afterAll(() => rmSync(runDir, { recursive: true, force: true }));
  const outcome = (ok: boolean, cost: number): RunOutcome => ({
    verdict: {
      schema_version: 1,
      agent: "claude",
      session_id: "s-1",
      status: ok ? "completed" : "failed",
      ok,
      text: ok ? "done" : null,
      envelope: null,
      failure: ok ? null : missing,
      stop_reason: null,
      cost_micro_usd: cost,
      cost_source: "reported",
      tokens: { input: 1, output: 2, cache_read: 3, cache_write: 4 },
      refused: [],
      env_fault: false,
      fault: null,
      changes: null,
      resume_after: null,
      agent_version: null,
      agent_version_tested: false,
      summary: {},
    } as Verdict,
    exitCode: ok ? 0 : 1,
    runDir,
  });

  test("bounded: at most N nudges, never more than MAX_NUDGES, and stops at the first envelope", async () => {
    for (const [asked, expected] of [
      [0, 1],
      [2, 3],
      [1000, MAX_NUDGES + 1],
      [-5, 1],
    ] as const) {
      let turns = 0;
      const last: boolean[] = [];
      const result = await withNudges(asked, undefined, async (t) => {
        turns++;
        last.push(t.last);
        return outcome(false, 10);
      });
      expect(turns).toBe(expected);
      expect(last.filter(Boolean)).toEqual([true]);
      expect(last[last.length - 1]).toBe(true);
      if (expected > 1)
        expect(result.verdict).toMatchObject({
          cost_micro_usd: 10 * expected,
          tokens: { input: expected, cache_write: 4 * expected },
          summary: { nudges: expected - 1 },
        });
    }
    let turns = 0;
    await withNudges(5, undefined, async (t) => {
      turns++;
      return outcome(t.nudge === 2, 1);
    });
    expect(turns).toBe(3);
  });

  test("an interrupt stops the nudging", async () => {
    const controller = new AbortController();
    let turns = 0;
    await withNudges(5, controller.signal, async () => {
      turns++;
      controller.abort();
      return outcome(false, 1);
    });
    expect(turns).toBe(1);
  });
});
