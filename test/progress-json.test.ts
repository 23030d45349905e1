// --progress json is an event stream: every stderr line one JSON object with
// ts, session_id, agent, kind (human messages as kind "log"), idle activity at
// most once a second, and the verdict last; -q does not switch it off.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, fakeProject } from "./helpers.ts";
import { PROGRESS_FIELDS } from "../src/core/progress.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function records(stderr: string): Record<string, unknown>[] {
  const lines = stderr.split("\n").filter((l) => l !== "");
  return lines.map((line) => {
    try {
      return JSON.parse(line);
    } catch {
      throw new Error(`not JSON on stderr: ${line}`);
    }
  });
}

describe.each(["claude", "pi"] as const)("%s", (agent) => {
  test("every stderr line is a record with ts, session_id, agent and kind; the last is the verdict", async () => {
    const w = fakeProject("agentport-pjson-", { AGENTPORT_GATEWAY: "" });
    made.push(w.root);
    // A failing run says things (an error line) besides its events.
    const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "json", "--envelope", "say hello"], {
      cwd: w.proj,
      env: w.env,
    });
    const verdict = JSON.parse(ran.stdout);
    const all = records(ran.stderr);
    expect(all.length).toBeGreaterThan(2);
    for (const r of all) {
      expect(new Date(r.ts as string).toISOString()).toBe(r.ts as string);
      expect(typeof r.kind).toBe("string");
      expect(r.agent).toBe(agent);
    }
    expect(all.filter((r) => r.kind !== "log").every((r) => r.session_id === verdict.session_id)).toBe(true);
    expect(all.some((r) => r.kind === "log" && r.level === "error")).toBe(true);
    expect(all.at(-1)).toMatchObject({
      kind: "verdict",
      session_id: verdict.session_id,
      status: verdict.status,
      ok: verdict.ok,
      cost_micro_usd: verdict.cost_micro_usd,
      tokens: verdict.tokens,
      exit_code: ran.code,
    });
    // The run folder's progress.ndjson ends with the same verdict record.
    const show = JSON.parse((await agentport(["show", "--json", verdict.session_id], { cwd: w.proj, env: w.env })).stdout);
    const kept = readFileSync(join(show.phases.at(-1).run_dir, "progress.ndjson"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(kept.at(-1)).toEqual(all.at(-1)!);
  });
});

test("-q keeps an explicit --progress json, and lets only errors through as log records", async () => {
  const w = fakeProject("agentport-pjson-", {});
  made.push(w.root);
  const ran = await agentport(["run", "--agent", "claude", "-q", "--progress", "json", "say hello"], { cwd: w.proj, env: w.env });
  expect(ran.code).toBe(0);
  const all = records(ran.stderr);
  expect(all.some((r) => r.kind === "started")).toBe(true);
  expect(all.some((r) => r.kind === "log")).toBe(false);
  expect(all.at(-1)).toMatchObject({ kind: "verdict", ok: true, exit_code: 0 });
  const quiet = await agentport(["run", "--agent", "claude", "-q", "say hello"], { cwd: w.proj, env: w.env });
  expect(quiet.stderr).toBe("");
});

describe.each(["claude", "pi", "codex", "gemini", "opencode"] as const)("%s", (agent) => {
  test("every event carries the running tokens and cost; the last before the verdict has the verdict's, priced where the stream has no cost", async () => {
    const w = fakeProject("agentport-pjson-", { AGENTPORT_GATEWAY: "", GEMINI_CLI_TRUST_WORKSPACE: "true" });
    made.push(w.root);
    const model = "fake-model-1";
    writeFileSync(join(w.proj, "agentport.json"), JSON.stringify({ prices: { [model]: { input: 1, output: 2 } } }));
    expect((await agentport(["trust"], { cwd: w.proj, env: w.env })).code).toBe(0);
    // pi's fake names its own model; pi's stream has its cost.
    const ran = await agentport(
      ["run", "--agent", agent, ...(agent === "pi" ? [] : ["--model", model]), "--json", "--progress", "json", "say hello"],
      { cwd: w.proj, env: w.env },
    );
    expect(ran.code).toBe(0);
    const verdict = JSON.parse(ran.stdout);
    const events = records(ran.stderr).filter((r) => r.kind !== "log" && r.kind !== "verdict");
    expect(events.length).toBeGreaterThan(1);
    for (const e of events) {
      expect(Object.hasOwn(e, "tokens") && Object.hasOwn(e, "cost_micro_usd")).toBe(true);
      // Only the allow-listed fields leave agentport.
      for (const key of Object.keys(e)) expect(["schema_version", "ts", "session_id", "agent", "kind", ...PROGRESS_FIELDS]).toContain(key);
    }
    expect(verdict.tokens.input).toBeGreaterThan(0);
    expect(verdict.cost_micro_usd).toBeGreaterThan(0);
    expect(events.at(-1)).toMatchObject({ tokens: verdict.tokens, cost_micro_usd: verdict.cost_micro_usd });
    // Before the model said anything, nothing is counted.
    expect(events[0]!.cost_micro_usd).toBeNull();
  });
});

test("a run that never starts (bad input, a missing binary) ends --progress json with its verdict record too, naming its agent", async () => {
  const w = fakeProject("agentport-pjson-", {});
  made.push(w.root);
  const usage = await agentport(["run", "--agent", "claude", "--progress", "json", "--max-turns", "x", "hi"], { cwd: w.proj, env: w.env });
  expect(usage.code).toBe(2);
  expect(usage.stdout).toBe("");
  expect(records(usage.stderr).at(-1)).toMatchObject({ kind: "verdict", agent: "claude", status: "failed", ok: false, exit_code: 2 });
  // Refused before the arguments were read: still NDJSON (records() fails on any other line).
  const unknown = await agentport(["run", "--agent", "gemini", "--progress", "json", "--no-such-flag", "hi"], { cwd: w.proj, env: w.env });
  expect(unknown.code).toBe(2);
  expect(records(unknown.stderr).map((r) => r.kind)).toEqual(["log", "verdict"]);
  const missing = await agentport(
    ["run", "--agent=codex", "--progress=json", "--json", "--codex-bin", join(w.root, "nothing-here"), "hi"],
    { cwd: w.proj, env: w.env },
  );
  expect(missing.code).toBe(5);
  expect(JSON.parse(missing.stdout)).toMatchObject({ agent: "codex", status: "failed", env_fault: true });
  const all = records(missing.stderr);
  expect(all.at(-2)).toMatchObject({ kind: "log", level: "error" });
  expect(all.at(-1)).toMatchObject({ kind: "verdict", session_id: null, agent: "codex", status: "failed", exit_code: 5 });
});

test("idle activity is told at most once a second; one that brings new totals always", async () => {
  const w = fakeProject("agentport-pjson-", {});
  made.push(w.root);
  const scenario = JSON.stringify({
    steps: [...Array.from({ length: 60 }, () => ({ hook: "SessionStart" })), { text: "done" }, { result: { text: "done" } }],
  });
  const ran = await agentport(["run", "--agent", "claude", "--progress", "json", "hi"], {
    cwd: w.proj,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: scenario },
  });
  expect(ran.code).toBe(0);
  const all = records(ran.stderr);
  const idle = all.filter((r) => r.kind === "activity" && r.cost_micro_usd === null);
  const seconds = (Date.parse(idle.at(-1)!.ts as string) - Date.parse(idle[0]!.ts as string)) / 1000;
  expect(idle.length).toBeLessThanOrEqual(Math.floor(seconds) + 1);
  // The result's cost arrives in an activity record right after the answer.
  const events = all.filter((r) => r.kind !== "log" && r.kind !== "verdict");
  expect(events.at(-1)).toMatchObject({ kind: "activity", cost_micro_usd: 12_300 });
  expect(events.at(-2)).toMatchObject({ kind: "assistant_text" });
});
