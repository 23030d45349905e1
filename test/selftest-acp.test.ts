// selftest proves the server direction too: `agentport acp` fronting the fake
// claude, driven over ACP by selftest itself, offline and at zero tokens.
import { expect, test } from "bun:test";
import { agentport } from "./helpers.ts";

test("selftest --json has a passing check of agentport acp (initialize, session/new, a prompt to end_turn with the verdict, a hostile line answered while serving goes on)", async () => {
  const ran = await agentport(["selftest", "--json"]);
  const report = JSON.parse(ran.stdout) as {
    ok: boolean;
    checks: { name: string; ok: boolean; ms: number; error: string | null }[];
    ms: number;
  };
  const server = report.checks.filter((c) => c.name.startsWith("agentport acp:"));
  expect(server).toHaveLength(1);
  expect(server[0]).toMatchObject({ ok: true, error: null });
  expect(ran.code).toBe(0);
}, 60_000);
