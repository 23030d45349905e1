// `agentport config --agent X` prints the argv a run of X starts with, for
// all six agents (placeholders where only the run knows: the session id,
// the run folder, pi's new session file), built from the probe the ledger has
// cached for the binary once there is one, else from assumed capabilities.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { AGENT_NAMES, type AgentName } from "../src/core/agents.ts";
import { agentport, fakeProject, fakeRuns, type FakeProject } from "./helpers.ts";

const FLAGS: Record<AgentName, string[]> = {
  claude: ["--model", "prov/m1", "--permission-mode", "plan", "--append-system-prompt", "HOUSE RULES", "--", "--add-dir", "/tmp"],
  pi: ["--model", "prov/m1", "--thinking", "high", "--append-system-prompt", "HOUSE RULES", "--", "--verbose"],
  codex: ["--model", "prov/m1", "--permission-mode", "acceptEdits", "--append-system-prompt", "HOUSE RULES", "--", "--config", "foo=bar"],
  gemini: ["--model", "prov/m1", "--permission-mode", "plan", "--tools", "read", "--", "--include-directories", "/tmp"],
  opencode: ["--model", "prov/m1", "--thinking", "high", "--permission-mode", "plan", "--", "--title", "T"],
  acp: ["--acp-command", "fake-acp", "--permission-mode", "plan", "--", "--scenario", "text"],
};

/** The version each fake's probe reports; claude is not probed, nor acp (any command: no probe of its own). */
const PROBED: Record<AgentName, string | null> = {
  claude: null,
  pi: "0.85.0",
  codex: "0.169.0",
  gemini: "0.61.0",
  opencode: "1.18.33",
  acp: null,
};

const projects: FakeProject[] = [];
afterAll(() => {
  for (const p of projects) rmSync(p.root, { recursive: true, force: true });
});

/** The preview's words as patterns: a placeholder (`<…>`) stands for what only the run knows. */
const matches = (preview: string[], real: string[]): boolean =>
  preview.length === real.length &&
  preview.every((word, i) =>
    new RegExp(
      `^${word
        .split(/<[^>]+>/)
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        .join(".+")}$`,
      "s",
    ).test(real[i] ?? ""),
  );

async function config(p: FakeProject, env: Record<string, string>, agent: AgentName): Promise<{ argv: string[]; probed: string | null }> {
  const flags = FLAGS[agent];
  const at = flags.indexOf("--");
  const ran = await agentport(["config", "--json", "--agent", agent, ...flags.slice(0, at), "--", ...flags.slice(at + 1)], {
    cwd: p.proj,
    env,
  });
  expect({ code: ran.code, stderr: ran.stderr }).toEqual({ code: 0, stderr: "" });
  return JSON.parse(ran.stdout) as { argv: string[]; probed: string | null };
}

describe("config --agent X: the argv the run starts with, for every agent", () => {
  for (const agent of AGENT_NAMES) {
    test(`${agent}: before any probe (assumed), and after a run (${PROBED[agent] === null ? "no probe" : "the cached probe"}), it is the argv the agent received`, async () => {
      const p = fakeProject("agentport-config-argv-");
      projects.push(p);
      const env = { ...p.env, GEMINI_CLI_TRUST_WORKSPACE: "true", AGENTPORT_FAKE_PI_DIALECT: "0.85" };
      const before = await config(p, env, agent);
      expect(before.probed).toBeNull();
      const flags = FLAGS[agent];
      const at = flags.indexOf("--");
      const ran = await agentport(["run", "--agent", agent, "--json", ...flags.slice(0, at), "hi", ...flags.slice(at)], {
        cwd: p.proj,
        env,
      });
      expect({ code: ran.code, stderr: ran.code === 0 ? "" : ran.stderr }).toEqual({ code: 0, stderr: "" });
      const after = await config(p, env, agent);
      expect(after.probed).toBe(PROBED[agent]);
      const real = fakeRuns(p).at(-1)?.argv ?? [];
      expect({ preview: after.argv.slice(1), real, matches: matches(after.argv.slice(1), real) }).toEqual({
        preview: after.argv.slice(1),
        real,
        matches: true,
      });
    });
  }

  test("pi: the probed 0.85 names its session by id where the assumed 0.73.1 names a file", async () => {
    const p = fakeProject("agentport-config-argv-");
    projects.push(p);
    const env = { ...p.env, AGENTPORT_FAKE_PI_DIALECT: "0.85" };
    expect((await config(p, env, "pi")).argv).toContain("--session");
    await agentport(["run", "--agent", "pi", "--json", "hi"], { cwd: p.proj, env });
    const probed = await config(p, env, "pi");
    expect(probed.argv).toContain("--session-id");
    expect(probed.argv).not.toContain("--session");
  });
});
