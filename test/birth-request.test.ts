// The birth request, for all six agents, through the binary with the fake
// agents: a session born with a model, a permission mode (where the agent has
// one) and a pass-through is resumed without them, and the agent's argv on
// resume carries them; a flag on resume overrides one, and the phase's
// argv.json records the request it ran with.
import { afterAll, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { AGENT_NAMES, type AgentName } from "../src/core/agents.ts";
import { agentport, fakeProject, fakeRuns, hasWords, type FakeProject } from "./helpers.ts";

interface Birth {
  flags: string[];
  passThrough: string[];
  /** What the agent's argv must carry, born and resumed. */
  carries: string[][];
  /** What it carries when resume says --model prov/m2; null: the agent takes no --model (acp), which resume refuses as run does. */
  overridden: string[] | null;
}

const BIRTH: Record<AgentName, Birth> = {
  claude: {
    flags: ["--permission-mode", "acceptEdits"],
    passThrough: ["--add-dir", "/tmp"],
    carries: [["--model", "m1"], ["--permission-mode=acceptEdits"], ["--add-dir", "/tmp"]],
    overridden: ["--model", "m2"],
  },
  pi: {
    flags: [],
    passThrough: ["--verbose"],
    carries: [["--model", "openrouter/prov/m1"], ["--verbose"]],
    overridden: ["--model", "openrouter/prov/m2"],
  },
  codex: {
    flags: ["--permission-mode", "acceptEdits"],
    passThrough: ["--config", "foo=bar"],
    carries: [
      ["-m", "m1"],
      ["--sandbox", "workspace-write"],
      ["--config", "foo=bar"],
    ],
    overridden: ["-m", "m2"],
  },
  gemini: {
    flags: ["--permission-mode", "acceptEdits"],
    passThrough: ["--include-directories", "/tmp"],
    carries: [
      ["-m", "m1"],
      ["--approval-mode", "auto_edit"],
      ["--include-directories", "/tmp"],
    ],
    overridden: ["-m", "m2"],
  },
  opencode: {
    flags: ["--permission-mode", "plan"],
    passThrough: ["--title", "T"],
    carries: [
      ["-m", "prov/m1"],
      ["--agent", "plan"],
      ["--title", "T"],
    ],
    overridden: ["-m", "prov/m2"],
  },
  // The ACP command (resume runs the fake) and its pass-through are carried; the permission mode is the bridge's (not in the argv).
  acp: {
    flags: ["--acp-command", "fake-acp", "--permission-mode", "acceptEdits"],
    passThrough: ["--scenario", "text"],
    carries: [["--scenario", "text"]],
    overridden: null,
  },
};

const projects: FakeProject[] = [];
afterAll(() => {
  for (const p of projects) rmSync(p.root, { recursive: true, force: true });
});

/** The argv.json of every phase, oldest first. */
function phaseRecords(p: FakeProject): { request: Record<string, unknown> | null }[] {
  const runs = join(p.env.AGENTPORT_HOME ?? "", "runs");
  return readdirSync(runs)
    .sort()
    .map((dir) => JSON.parse(readFileSync(join(runs, dir, "argv.json"), "utf8")) as { request: Record<string, unknown> | null });
}

describe("resume reuses the birth request, for every agent", () => {
  for (const agent of AGENT_NAMES) {
    const birth = BIRTH[agent];
    test(`${agent}: born with ${birth.overridden === null ? "no model" : "a model"}${birth.flags.length > 0 ? ", a permission mode" : ""} and a pass-through; resumed without them, the argv carries them`, async () => {
      const p = fakeProject("agentport-birth-request-");
      projects.push(p);
      const env = { ...p.env, GEMINI_CLI_TRUST_WORKSPACE: "true" };
      const model = birth.overridden === null ? [] : ["--model", "prov/m1"];
      const born = await agentport(["run", "--agent", agent, "--json", ...model, ...birth.flags, "hi", "--", ...birth.passThrough], {
        cwd: p.proj,
        env,
      });
      expect({ code: born.code, stderr: born.code === 0 ? "" : born.stderr }).toEqual({ code: 0, stderr: "" });
      const id = (JSON.parse(born.stdout) as { session_id: string }).session_id;

      const resumed = await agentport(["resume", id, "--json", "again"], { cwd: p.proj, env });
      expect({ code: resumed.code, stderr: resumed.code === 0 ? "" : resumed.stderr }).toEqual({ code: 0, stderr: "" });
      const override = await agentport(["resume", id, "--json", "--model", "prov/m2", "once more"], { cwd: p.proj, env });
      if (birth.overridden === null) {
        // An agent without --model refuses it on resume as on run: one line naming it, nothing run.
        expect({
          code: override.code,
          lines: override.stderr.trim().split("\n").length,
          named: override.stderr.includes(`${agent}`) && override.stderr.includes("--model"),
        }).toEqual({ code: 2, lines: 1, named: true });
      } else expect({ code: override.code, stderr: override.code === 0 ? "" : override.stderr }).toEqual({ code: 0, stderr: "" });

      const [first, second, third] = fakeRuns(p);
      for (const words of birth.carries) {
        expect({ words, born: hasWords(first?.argv ?? [], words), resumed: hasWords(second?.argv ?? [], words) }).toEqual({
          words,
          born: true,
          resumed: true,
        });
      }
      const requests = phaseRecords(p).map((r) => r.request?.model ?? null);
      if (birth.overridden === null) {
        expect({ third, requests }).toEqual({ third: undefined, requests: [null, null] });
        return;
      }
      expect({ argv: third?.argv, overridden: hasWords(third?.argv ?? [], birth.overridden) }).toEqual({
        argv: third?.argv,
        overridden: true,
      });
      // The rest of the birth request still holds on the overriding phase.
      for (const words of birth.carries.slice(1)) expect(hasWords(third?.argv ?? [], words)).toBe(true);
      expect(requests).toEqual(["prov/m1", "prov/m1", "prov/m2"]);
    });
  }
});
