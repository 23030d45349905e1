// `agentport doctor --agent acp --acp-command CMD`: the ACP agent started and
// sent initialize only (zero tokens); what it answered, or why it did not.
import { expect, test } from "bun:test";
import { BIN, agentport, fakeProject } from "./helpers.ts";

test("doctor probes an ACP command with initialize only: the fake ACP agent, agentport acp itself, a command that is no ACP agent", async () => {
  const p = fakeProject("agentport-doctor-acp-");
  const fake = await agentport(["doctor", "--agent", "acp", "--acp-command", "fake-acp", "--json"], { cwd: p.proj, env: p.env });
  expect(fake.code).toBe(0);
  const report = JSON.parse(fake.stdout);
  expect(report.ready).toEqual(["acp"]);
  expect(report.checks.find((c: { name: string }) => c.name === "acp").detail).toMatch(
    /fake-acp 1\.0\.0, protocol 1, capabilities loadSession,embeddedContext \(initialize only, \d+ ms\)$/,
  );
  // The fake was sent initialize and nothing else.
  const { readFileSync } = await import("node:fs");
  const methods = readFileSync(p.log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l).method)
    .filter(Boolean);
  expect(methods).toEqual(["initialize"]);

  const self = await agentport(["doctor", "--agent", "acp", "--acp-command", `${BIN} acp --agent claude`], { cwd: p.proj, env: p.env });
  expect(self.code).toBe(0);
  expect(self.stdout).toContain("agentport");

  const none = await agentport(["doctor", "--agent", "acp", "--acp-command", "true"], { cwd: p.proj, env: p.env });
  expect(none.code).toBe(5);
  expect(none.stdout).toContain("it ended without answering initialize");
  const missing = await agentport(["doctor", "--agent", "acp", "--acp-command", "no-such-acp-agent --acp"], { cwd: p.proj, env: p.env });
  expect(missing.code).toBe(5);
  expect(missing.stdout).toContain("no-such-acp-agent");
}, 60_000);
