// One verdict rule for every agent, through the binary with the fakes: rows
// where agents once disagreed. A run that made a tool call and ended without
// a word completes with summary.empty_answer (the README's rule): codex once
// failed it as empty_answer where pi and opencode completed it. No tool call
// and no text fails as empty_answer for every agent.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";

const projects: FakeProject[] = [];
afterAll(() => {
  for (const p of projects) rmSync(p.root, { recursive: true, force: true });
});

interface Row {
  name: string;
  /** The fake's scenario (src/fake/scenario.ts). */
  steps: unknown[];
  expected: { code: number; status: string; failure: string | null; empty_answer: boolean | undefined };
}

// The fakes that share one scenario language (src/fake/scenario.ts); pi's and claude's rows are verdict-table.test.ts's.
const STREAM_AGENTS = ["codex", "gemini", "opencode"] as const;

const ROWS: Row[] = [
  {
    name: "a tool call, then the run ends without text",
    steps: [{ tool: { name: "shell", input: { command: "ls" }, result: "a.txt" } }, { done: true }],
    expected: { code: 0, status: "completed", failure: null, empty_answer: true },
  },
  {
    name: "no tool call and no text",
    steps: [{ done: true }],
    expected: { code: 1, status: "failed", failure: "empty_answer", empty_answer: undefined },
  },
];

// claude once recorded tokens: null for a run stopped before its result though
// its progress had shown them; pi kept its running totals. Both keep them now,
// marked partial.
const STOPPED_AFTER_TOKENS: Record<"claude" | "pi", unknown> = {
  claude: { steps: [{ text: "Working on it." }, { hang: true }] },
  pi: { steps: [{ text: "Working on it." }, { hang: true }] },
};

describe("a run stopped after tokens were seen keeps them, marked partial, for every agent", () => {
  for (const [agent, scenario] of Object.entries(STOPPED_AFTER_TOKENS)) {
    test(`timeout after a message × ${agent}`, async () => {
      const p = fakeProject("agentport-same-rule-");
      projects.push(p);
      const env = { ...p.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario) };
      const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "off", "--timeout", "1.5", "go"], { cwd: p.proj, env });
      const verdict = JSON.parse(ran.stdout) as { status: string; tokens: { input: number } | null; summary: Record<string, unknown> };
      expect({
        code: ran.code,
        status: verdict.status,
        seen: (verdict.tokens?.input ?? 0) > 0,
        partial: verdict.summary.tokens_partial,
      }).toEqual({ code: 4, status: "timeout", seen: true, partial: true });
    });
  }
});

describe("the same row, the same verdict, for every agent", () => {
  for (const row of ROWS) {
    for (const agent of STREAM_AGENTS) {
      test(`${row.name} × ${agent}`, async () => {
        const p = fakeProject("agentport-same-rule-");
        projects.push(p);
        const env = { ...p.env, GEMINI_CLI_TRUST_WORKSPACE: "true", AGENTPORT_FAKE_SCENARIO: JSON.stringify({ steps: row.steps }) };
        const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "off", "go"], { cwd: p.proj, env });
        const verdict = JSON.parse(ran.stdout) as { status: string; failure: { kind: string } | null; summary: Record<string, unknown> };
        expect({
          code: ran.code,
          status: verdict.status,
          failure: verdict.failure?.kind ?? null,
          empty_answer: verdict.summary.empty_answer,
        }).toEqual(row.expected);
      });
    }
  }
});
