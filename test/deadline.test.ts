// The agent knows its deadline: through the compiled binary, the fake claude
// and the fake codex log what they were given — AGENTPORT_DEADLINE in the
// environment with a timeout (none without), and with --tell-deadline one
// line in claude's appended system prompt (every agent's cell: request-table);
// --tell-deadline where it cannot be told is refused (exit 2).
import { beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";

let p: FakeProject;
beforeAll(() => {
  p = fakeProject("agentport-deadline-", { AGENTPORT_FAKE_LOG_ENV: "AGENTPORT_DEADLINE" });
});

const lastCall = () =>
  JSON.parse(readFileSync(p.log, "utf8").trim().split("\n").at(-1)!) as {
    fake: string;
    argv: string[];
    env: Record<string, string | null>;
  };

describe("the deadline", () => {
  test("with --timeout: AGENTPORT_DEADLINE, RFC 3339 UTC, the start plus the timeout; --tell-deadline says it in claude's system prompt", async () => {
    const before = Date.now();
    const ran = await agentport(
      ["run", "--agent", "claude", "--timeout", "600", "--tell-deadline", "--append-system-prompt", "Be brief.", "--progress", "off", "go"],
      { cwd: p.proj, env: p.env },
    );
    expect(ran.code).toBe(0);
    const call = lastCall();
    const deadline = call.env.AGENTPORT_DEADLINE!;
    expect(deadline).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(deadline)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 600_000 - 1000);
    expect(Date.parse(deadline)).toBeLessThanOrEqual(Date.now() + 600_000);
    expect(call.argv.find((a) => a.startsWith("--append-system-prompt="))).toBe(
      "--append-system-prompt=Be brief.\n\nYou have 10 minutes; save your work before then.",
    );
  });

  test("every agent gets the variable, agentport's own (one in agentport's environment is withheld); without a timeout there is none, and nothing is told", async () => {
    const env = { ...p.env, AGENTPORT_DEADLINE: "1999-01-01T00:00:00Z" };
    expect((await agentport(["run", "--agent", "codex", "--timeout", "90", "--progress", "off", "go"], { cwd: p.proj, env })).code).toBe(0);
    expect(lastCall().env.AGENTPORT_DEADLINE).toMatch(/^20\d\d-.*Z$/);
    expect((await agentport(["run", "--agent", "claude", "--timeout", "0", "--progress", "off", "go"], { cwd: p.proj, env })).code).toBe(0);
    expect(lastCall().env.AGENTPORT_DEADLINE).toBeNull();
    expect(lastCall().argv.some((a) => a.startsWith("--append-system-prompt"))).toBe(false);
  });

  test("--tell-deadline without a timeout, or for an agent without an appended system prompt: one line, exit 2, nothing run", async () => {
    const lines = readFileSync(p.log, "utf8").split("\n").length;
    const none = await agentport(["run", "--agent", "claude", "--timeout", "0", "--tell-deadline", "go"], { cwd: p.proj, env: p.env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--tell-deadline: there is no deadline to tell");
    const gemini = await agentport(["run", "--agent", "gemini", "--tell-deadline", "go"], { cwd: p.proj, env: p.env });
    expect(gemini.code).toBe(2);
    expect(gemini.stderr.trim()).toBe(
      "[error] --tell-deadline: gemini takes no appended system prompt to tell the deadline in; its environment has it as AGENTPORT_DEADLINE; or say it in the prompt",
    );
    expect(readFileSync(p.log, "utf8").split("\n").length).toBe(lines);
  });
});
