// `agentport doctor` against the real pi and claude devDependencies: zero tokens.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { agentport, ROOT, tempDir } from "./helpers.ts";

const bin = (name: string) => join(ROOT, "node_modules", ".bin", name);

describe("agentport doctor", () => {
  test("reports the real pi 0.73.1 (dialect, flags, rpc) and claude", async () => {
    const home = tempDir();
    const ran = await agentport(["doctor", "--json", "--home", join(home, "state"), "--pi-bin", bin("pi"), "--claude-bin", bin("claude")], {
      env: { HOME: home },
    });
    // One object: {ok, checks: [{name, ok, ms, error}], ms}.
    const report = JSON.parse(ran.stdout) as { ok: boolean; ms: number; checks: { name: string; ok: boolean; ms: number; error: string | null; detail: string }[] };
    expect(ran.code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.ms).toBeGreaterThanOrEqual(0);
    for (const c of report.checks) expect(c).toMatchObject({ ok: true, error: null, ms: expect.any(Number) });
    const pi = report.checks.find((f) => f.name === "pi");
    expect(pi?.detail).toContain("pi 0.73.1, sessions named by session-file");
    expect(pi?.detail).not.toContain("--session-id");
    expect(report.checks.find((f) => f.name === "pi rpc")?.detail).toContain("get_state answered");
    expect(report.checks.find((f) => f.name === "claude")?.detail).toContain("2.1.197");
  });

  test("--json with a missing agent: still one object, the failed check with its error", async () => {
    const home = tempDir();
    const ran = await agentport(["doctor", "--json", "--home", join(home, "state"), "--pi-bin", join(home, "no-pi")], { env: { HOME: home } });
    expect(ran.code).toBe(5);
    const report = JSON.parse(ran.stdout);
    expect(report.ok).toBe(false);
    expect(report.checks.find((c: { name: string }) => c.name === "pi")).toMatchObject({ ok: false, error: expect.stringContaining("no-pi") });
  });

  test("a missing agent is a finding with what to do, exit 5", async () => {
    const home = tempDir();
    const ran = await agentport(["doctor", "--home", join(home, "state"), "--pi-bin", join(home, "no-pi")], { env: { HOME: home } });
    expect(ran.code).toBe(5);
    expect(ran.stdout).toContain("FAIL pi");
    expect(ran.stdout).toContain("→ npm install -g @mariozechner/pi-coding-agent");
  });
});
