// Version drift (issue #27 item 5): each reducer's captured fixture mutated
// the way real releases changed them (a renamed end event, as codex 0.144 and
// opencode's renames did; a moved usage field), replayed through the binary:
// the verdict says which types came and what never did, and the failure names
// the version. The version itself comes from the probe (claude: system/init).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT_NAMES } from "../src/core/agents.ts";
import { versionTested } from "../src/core/drift.ts";
import { TESTED, versionFit } from "../src/core/readiness.ts";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, fakeProject, ROOT } from "./helpers.ts";
import { tempDir } from "./standins/util.ts";

const DIR = tempDir("agentport-drift-");
mkdirSync(DIR, { recursive: true });
const made: string[] = [DIR];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

async function replayMutated(agent: string, fixture: string, mutate: (text: string) => string) {
  const original = readFileSync(join(ROOT, "test", "fixtures", agent, fixture), "utf8");
  const mutated = mutate(original);
  expect(mutated).not.toBe(original);
  const file = join(DIR, `${agent}-${fixture}`);
  writeFileSync(file, mutated);
  const { code, stdout } = await agentport(["replay", "--agent", agent, "--json", file]);
  return { code, verdict: VerdictSchema.parse(JSON.parse(stdout)) };
}

const RENAMED = [
  ["claude", "a-plain.plain.jsonl", '"type":"result"', '"type":"session_result"', "session_result", "result"],
  ["codex", "a-plain.plain.jsonl", '"type":"turn.completed"', '"type":"turn.done"', "turn.done", "turn.completed"],
  ["gemini", "a-plain.auto.jsonl", '"type":"result"', '"type":"run_result"', "run_result", "result"],
  ["pi", "a1-json-text-argv.jsonl", '"type":"agent_end"', '"type":"agent_finished"', "agent_finished", "agent_end"],
] as const;

describe("a renamed end event: summary.drift_*, the failure names the version", () => {
  test.each(RENAMED)("%s %s: %s renamed", async (agent, fixture, from, to, unknown, missing) => {
    const { code, verdict } = await replayMutated(agent, fixture, (t) => t.replaceAll(from, to));
    expect(code).toBe(1);
    expect(verdict).toMatchObject({
      status: "failed",
      failure: { kind: "no_result" },
      summary: { drift_unknown_types: expect.stringContaining(unknown), drift_missing: missing },
    });
    expect(verdict.failure?.message).toContain(`version drift? ${agent} `);
    expect(verdict.failure?.message).toContain(`${missing} never did`);
  });

  test("the fixtures as captured: no drift", async () => {
    for (const [agent, fixture] of RENAMED) {
      const { verdict } = await replayMutated(agent, fixture, (t) => `${t}\n`);
      expect(verdict.summary.drift_missing).toBeUndefined();
    }
  });

  test("claude's version comes from its system/init: 2.1.197 is tested", async () => {
    const { verdict } = await replayMutated("claude", "a-plain.plain.jsonl", (t) => `${t}\n`);
    expect(verdict).toMatchObject({ agent_version: "2.1.197", agent_version_tested: true });
    const newer = await replayMutated("claude", "a-plain.plain.jsonl", (t) =>
      t.replaceAll('"result"', '"outcome"').replace('"claude_code_version":"2.1.197"', '"claude_code_version":"2.2.0"'),
    );
    expect(newer.verdict).toMatchObject({ agent_version: "2.2.0", agent_version_tested: false });
    expect(newer.verdict.failure?.message).toContain("claude 2.2.0, outside the versions agentport was tested with");
  });
});

describe("a moved usage field", () => {
  test("codex: turn.completed's usage moved under info: tokens null, drift_missing names the field", async () => {
    const { verdict } = await replayMutated("codex", "a-plain.plain.jsonl", (t) =>
      t.replace('"type":"turn.completed","usage":', '"type":"turn.completed","info":'),
    );
    expect(verdict).toMatchObject({
      status: "completed",
      tokens: null,
      cost_source: "unknown",
      summary: { drift_missing: "turn.completed.usage" },
    });
  });

  test("gemini: the result's token counts renamed: drift_missing names the field", async () => {
    const { verdict } = await replayMutated("gemini", "a-plain.auto.jsonl", (t) => t.replace('"input_tokens"', '"prompt_tokens"'));
    expect(verdict).toMatchObject({ status: "completed", summary: { drift_missing: "result.stats.input_tokens" } });
  });
});

describe("agent_version per phase, from the probe", () => {
  test.each(["codex", "gemini", "opencode", "pi"])("%s: the verdict and the phase row carry the probed version", async (agent) => {
    const w = fakeProject("agentport-drift-run-", { GEMINI_CLI_TRUST_WORKSPACE: "true" });
    made.push(w.root);
    const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "off", "go"], {
      cwd: w.proj,
      env: { ...w.env, AGENTPORT_FAKE_SCENARIO: "text" },
    });
    const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
    expect(verdict.agent_version).toMatch(/\d+\.\d+\.\d+/);
    expect(verdict.agent_version_tested).toBe(true);
    const listed = await agentport(["sessions", "--json"], { cwd: w.proj, env: w.env });
    expect(JSON.parse(listed.stdout.split("\n")[0] ?? "{}").phases[0]).toMatchObject({ agent_version: verdict.agent_version });
  });
});

describe("one table of tested versions", () => {
  test("the verdict's agent_version_tested and doctor's version fit agree for every agent", () => {
    const versions = ["0.61.0", "0.73.1", "0.80.0", "0.85.3", "0.86.0", "0.169.0", "1.18.33", "2.1.197", "2.2.0", "nonsense"];
    for (const agent of AGENT_NAMES)
      for (const v of versions) expect([agent, v, versionTested(agent, v)]).toEqual([agent, v, versionFit(TESTED[agent], v) === "tested"]);
  });
});
