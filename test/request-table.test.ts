// Every setting × every agent, through the compiled binary with the fake
// agents: each cell is either expressed (in the argv the agent received, in
// its environment, or by agentport's supervisor) or refused before anything
// starts (exit 2, one line naming the agent and the setting, no agent run).
// Nothing is dropped in silence.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AGENT_NAMES, type AgentName } from "../src/core/agents.ts";
import { AGENT_FLAGS, agentport, fakeProject, fakeRuns, hasWords, type FakeProject } from "./helpers.ts";

type Cell =
  /** These words, in this order, somewhere in the agent's argv. */
  | { argv: string[] }
  /** The agent's environment has this variable at this value. */
  | { env: [string, string] }
  /** The prompt the agent got on stdin (prompt.txt, --keep-prompt) has these words. */
  | { prompt: string }
  /** agentport enforces it: the run goes on, the verdict's summary has this fact. */
  | { summary: string }
  /** Exit 2 before the agent starts; the line names these words. */
  | { refused: string };

interface Row {
  flags: string[];
  /** An agent's own flags for this row, in place of `flags`. */
  flagsOf?: Partial<Record<AgentName, string[]>>;
  /** An agent's environment for this row (the fake's scenario). */
  envOf?: Partial<Record<AgentName, Record<string, string>>>;
  passThrough?: string[];
  cells: Record<AgentName, Cell>;
}

// acp: the permission bridge answers what the agent asks (its answers: test/acp-fake.test.ts); the run goes on.
const BRIDGED: Cell = { summary: "agent_name" };

// What the envelope's instructions say (core/instructions.ts), after the prompt for an agent without a system-prompt flag.
const ENVELOPE_WORDS = "This task ends with a structured report, the envelope";
// What --tell-deadline appends for a 60 s timeout (core/deadline.ts).
const DEADLINE_LINE = "You have 1 minute; save your work before then.";

const ROWS: Record<string, Row> = {
  model: {
    flags: ["--model", "prov/m1"],
    cells: {
      pi: { argv: ["--model", "openrouter/prov/m1"] },
      claude: { argv: ["--model", "m1"] },
      codex: { argv: ["-m", "m1"] },
      gemini: { argv: ["-m", "m1"] },
      opencode: { argv: ["-m", "prov/m1"] },
      acp: { refused: "--model" },
    },
  },
  tools: {
    flags: ["--tools", "read"],
    cells: {
      pi: { argv: ["--tools", "read"] },
      claude: { argv: ["--allowedTools=Read"] },
      codex: { refused: "--tools" },
      gemini: { argv: ["--allowed-tools", "read_file"] },
      opencode: { refused: "--tools" },
      acp: { refused: "--tools" },
    },
  },
  thinking: {
    flags: ["--thinking", "high"],
    cells: {
      pi: { argv: ["--thinking", "high"] },
      claude: { env: ["MAX_THINKING_TOKENS", "16384"] },
      codex: { argv: ["-c", 'model_reasoning_effort="high"'] },
      gemini: { refused: "--thinking" },
      opencode: { argv: ["--variant", "high"] },
      acp: { refused: "--thinking" },
    },
  },
  "permission-mode plan": {
    flags: ["--permission-mode", "plan"],
    cells: {
      pi: { refused: "--permission-mode" },
      claude: { argv: ["--permission-mode=plan"] },
      codex: { argv: ["--sandbox", "read-only"] },
      gemini: { argv: ["--approval-mode", "plan"] },
      opencode: { argv: ["--agent", "plan"] },
      acp: BRIDGED,
    },
  },
  "permission-mode acceptEdits": {
    flags: ["--permission-mode", "acceptEdits"],
    cells: {
      pi: { refused: "--permission-mode" },
      claude: { argv: ["--permission-mode=acceptEdits"] },
      codex: { argv: ["--sandbox", "workspace-write"] },
      gemini: { argv: ["--approval-mode", "auto_edit"] },
      opencode: { refused: "--permission-mode" },
      acp: BRIDGED,
    },
  },
  "max-turns": {
    flags: ["--max-turns", "3"],
    cells: {
      pi: { summary: "assistant_turns" },
      claude: { argv: ["--max-turns=3"] },
      codex: { refused: "--max-turns" },
      gemini: { refused: "--max-turns" },
      opencode: { refused: "--max-turns" },
      acp: { refused: "--max-turns" },
    },
  },
  "max-cost": {
    flags: ["--max-cost", "5"],
    // acp: the fake is no ACP agent known to report its cost (opencode acp, claude-agent-acp are: test/acp-max-cost.test.ts).
    cells: {
      pi: { summary: "running_cost_micro_usd" },
      claude: { argv: ["--max-budget-usd=5"] },
      codex: { refused: "--max-cost" },
      gemini: { refused: "--max-cost" },
      opencode: { summary: "running_cost_micro_usd" },
      acp: { refused: "--max-cost" },
    },
  },
  "append-system-prompt": {
    flags: ["--append-system-prompt", "HOUSE RULES"],
    cells: {
      pi: { argv: ["--append-system-prompt", "HOUSE RULES"] },
      claude: { argv: ["--append-system-prompt=HOUSE RULES"] },
      codex: { argv: ["-c", 'developer_instructions="HOUSE RULES"'] },
      gemini: { refused: "--append-system-prompt" },
      opencode: { refused: "--append-system-prompt" },
      acp: { refused: "--append-system-prompt" },
    },
  },
  "tell-deadline": {
    flags: ["--timeout", "60", "--tell-deadline"],
    cells: {
      pi: { argv: ["--append-system-prompt", DEADLINE_LINE] },
      claude: { argv: [`--append-system-prompt=${DEADLINE_LINE}`] },
      codex: { argv: ["-c", `developer_instructions="${DEADLINE_LINE}"`] },
      gemini: { refused: "--tell-deadline" },
      opencode: { refused: "--tell-deadline" },
      acp: { refused: "--tell-deadline" },
    },
  },
  "pass-through": {
    flags: [],
    passThrough: [],
    cells: {
      pi: { argv: ["--verbose"] },
      claude: { argv: ["--add-dir", "/tmp"] },
      codex: { argv: ["--config", "foo=bar"] },
      gemini: { argv: ["--include-directories", "/tmp"] },
      opencode: { argv: ["--title", "T"] },
      acp: { argv: ["--scenario", "text"] },
    },
  },
  envelope: {
    flags: ["--envelope", "--keep-prompt"],
    cells: {
      pi: { argv: ["-e"] },
      claude: { argv: ["--append-system-prompt="] },
      codex: { argv: ["--output-schema"] },
      gemini: { prompt: ENVELOPE_WORDS },
      opencode: { prompt: ENVELOPE_WORDS },
      acp: { prompt: ENVELOPE_WORDS },
    },
  },
  "session-dir": {
    flags: ["--session-dir", "/tmp/agentport-request-table-sessions"],
    cells: {
      pi: { argv: ["--session", "/tmp/agentport-request-table-sessions/"] },
      claude: { refused: "--session-dir" },
      codex: { refused: "--session-dir" },
      gemini: { refused: "--session-dir" },
      opencode: { refused: "--session-dir" },
      acp: { refused: "--session-dir" },
    },
  },
  gateway: {
    flags: ["--model", "m1", "--gateway", "gw"],
    // acp refuses --model too: the gateway alone, for one line.
    flagsOf: { acp: ["--gateway", "gw"] },
    cells: {
      pi: { argv: ["--model", "gw/m1"] },
      claude: { refused: "--gateway" },
      codex: { refused: "--gateway" },
      gemini: { refused: "--gateway" },
      opencode: { refused: "--gateway" },
      acp: { refused: "--gateway" },
    },
  },
  "require-ext": {
    flags: ["--require-ext", "tool:x"],
    cells: {
      pi: { argv: ["-e"] },
      claude: { refused: "--require-ext" },
      codex: { refused: "--require-ext" },
      gemini: { refused: "--require-ext" },
      opencode: { refused: "--require-ext" },
      acp: { refused: "--require-ext" },
    },
  },
  nudges: {
    flags: ["--envelope", "--nudges", "1"],
    cells: {
      pi: { argv: ["-e"] },
      claude: { argv: ["--append-system-prompt="] },
      codex: { refused: "--nudges" },
      gemini: { refused: "--nudges" },
      opencode: { refused: "--nudges" },
      acp: { refused: "--nudges" },
    },
  },
};

/** The pass-through each agent's CLI takes (every fake checks its flags as the real CLI does). */
const PASS_THROUGH: Record<AgentName, string[]> = {
  pi: ["--verbose"],
  claude: ["--add-dir", "/tmp"],
  codex: ["--config", "foo=bar"],
  gemini: ["--include-directories", "/tmp"],
  opencode: ["--title", "T"],
  acp: ["--scenario", "text"],
};

const projects: FakeProject[] = [];
afterAll(() => {
  for (const p of projects) rmSync(p.root, { recursive: true, force: true });
});

/** Every prompt.txt under the state folder's runs. */
function keptPrompts(p: FakeProject): string[] {
  const runs = join(p.env.AGENTPORT_HOME ?? "", "runs");
  return existsSync(runs)
    ? readdirSync(runs, { recursive: true, encoding: "utf8" })
        .filter((f) => f.endsWith("prompt.txt"))
        .map((f) => readFileSync(join(runs, f), "utf8"))
    : [];
}

describe("settings × agents: expressed or refused, never dropped", () => {
  for (const [name, row] of Object.entries(ROWS)) {
    for (const agent of AGENT_NAMES) {
      const cell = row.cells[agent];
      test(`${name} × ${agent}: ${"refused" in cell ? "refused" : "expressed"}`, async () => {
        const p = fakeProject("agentport-request-table-");
        projects.push(p);
        const tail = row.passThrough === undefined ? [] : ["--", ...PASS_THROUGH[agent]];
        const env = { ...p.env, GEMINI_CLI_TRUST_WORKSPACE: "true", ...row.envOf?.[agent] };
        const flags = row.flagsOf?.[agent] ?? row.flags;
        const ran = await agentport(["run", "--agent", agent, ...AGENT_FLAGS[agent], "--json", ...flags, "hi", ...tail], {
          cwd: p.proj,
          env,
        });
        const ran2 = fakeRuns(p);
        if ("refused" in cell) {
          expect(ran.code).toBe(2);
          const lines = ran.stderr.trim().split("\n");
          expect(lines.length).toBe(1);
          expect(lines[0]).toContain(agent);
          expect(lines[0]).toContain(cell.refused);
          expect(ran2).toEqual([]);
          return;
        }
        // The agent ran (a run without the envelope the fake never writes may fail: exit 1, not 2).
        expect({ code: ran.code === 2 ? 2 : "ran", stderr: ran.code === 2 ? ran.stderr : "" }).toEqual({ code: "ran", stderr: "" });
        const got = ran2.at(-1);
        expect(got).toBeDefined();
        if ("argv" in cell) expect({ argv: got?.argv, has: hasWords(got?.argv ?? [], cell.argv) }).toEqual({ argv: got?.argv, has: true });
        if ("env" in cell) expect(got?.max_thinking_tokens).toBe(cell.env[1]);
        if ("prompt" in cell) expect(keptPrompts(p).some((text) => text.startsWith("hi\n\n") && text.includes(cell.prompt))).toBe(true);
        if ("summary" in cell)
          expect(Object.keys((JSON.parse(ran.stdout) as { summary: Record<string, unknown> }).summary)).toContain(cell.summary);
      });
    }
  }
});
