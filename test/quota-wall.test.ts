// Quota walls (issue #27 item 3): each agent's usage-limit message, as its
// fixture records it (test/fixtures/<agent>/quota/README.md says where each
// comes from), played by its fake agent through the compiled binary: the run
// is parked (exit 75) with resume_after in the verdict and the ledger, and the
// resume command on stderr; `resume --when-ready` waits for it.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { agentport, fakeProject, ROOT, type FakeProject } from "./helpers.ts";
import { postgres, usePostgres } from "./pg.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function world(): FakeProject {
  const w = fakeProject("agentport-quota-", { GEMINI_CLI_TRUST_WORKSPACE: "true" });
  made.push(w.root);
  return w;
}

const fixture = (agent: string, name: string) => readFileSync(join(ROOT, "test", "fixtures", agent, "quota", name), "utf8");
const lines = (text: string) => text.split("\n").filter((l) => l.trim() !== "");

async function run(w: FakeProject, agent: string, scenario: object, env: Record<string, string> = {}) {
  const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "off", "go"], {
    cwd: w.proj,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: JSON.stringify(scenario), ...env },
  });
  const verdict: Verdict | null = ran.stdout.trim().startsWith("{") ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null;
  return { ...ran, verdict };
}

/** A claude session-limit stream whose reset is `resetsAt` (epoch seconds), as real claude 2.1.197 printed it. */
function claudeWall(resetsAt: number): object {
  const [, event, , result] = lines(fixture("claude", "session-limit.jsonl")).map((l) => JSON.parse(l) as Record<string, any>);
  event!.rate_limit_info.resetsAt = resetsAt;
  return {
    steps: [
      { raw: JSON.stringify(event) },
      { result: { is_error: true, text: result!.result, api_error_status: 429, cost_usd: 0 } },
      { exit: 1 },
    ],
  };
}

const near = (iso: string | null | undefined, ms: number) => Math.abs(Date.parse(iso ?? "") - ms) < 120_000;

describe("a quota wall parks the run (exit 75)", () => {
  test("claude: the rejected rate_limit_event gives resume_after; the ledger keeps it; stderr gives the resume command", async () => {
    const w = world();
    const resetsAt = Math.floor(Date.now() / 1000) + 3 * 3600;
    const { code, verdict, stderr } = await run(w, "claude", claudeWall(resetsAt));
    expect(code).toBe(75);
    expect(verdict).toMatchObject({
      status: "parked",
      ok: false,
      fault: { kind: "quota_wall" },
      resume_after: new Date(resetsAt * 1000).toISOString(),
    });
    expect(stderr).toContain(`agentport resume --when-ready ${verdict?.session_id}`);
    const listed = await agentport(["sessions", "--json"], { cwd: w.proj, env: w.env });
    const phase = JSON.parse(lines(listed.stdout)[0] ?? "{}").phases?.[0];
    expect(phase).toMatchObject({ status: "parked", resume_after: new Date(resetsAt * 1000).toISOString() });
  });

  test.skipIf(usePostgres("test/quota-wall.test.ts"))(
    "the PostgreSQL ledger keeps resume_after, cost_source and agent_version too",
    async () => {
      const w = world();
      const url = await (await postgres()).fresh();
      const resetsAt = Math.floor(Date.now() / 1000) + 3600;
      const { code } = await run(w, "claude", claudeWall(resetsAt), { AGENTPORT_LEDGER: url });
      expect(code).toBe(75);
      const listed = await agentport(["sessions", "--json", "--ledger", url], { cwd: w.proj, env: w.env });
      const phase = JSON.parse(lines(listed.stdout)[0] ?? "{}").phases?.[0];
      expect(phase).toMatchObject({ status: "parked", resume_after: new Date(resetsAt * 1000).toISOString(), cost_source: "reported" });
    },
  );

  test("claude: the real capture, replayed", async () => {
    const { code, stdout } = await agentport([
      "replay",
      "--agent",
      "claude",
      "--json",
      join(ROOT, "test/fixtures/claude/quota/session-limit.jsonl"),
    ]);
    expect(code).toBe(75);
    const event = JSON.parse(lines(fixture("claude", "session-limit.jsonl"))[1] ?? "{}");
    expect(JSON.parse(stdout)).toMatchObject({
      status: "parked",
      resume_after: new Date(event.rate_limit_info.resetsAt * 1000).toISOString(),
    });
  });

  test("codex: its usage-limit error event; resume_after from 'try again in 4 days 6 hours 37 minutes'", async () => {
    const started = Date.now();
    const { code, verdict } = await run(world(), "codex", {
      steps: [...lines(fixture("codex", "usage-limit.jsonl")).map((raw) => ({ raw })), { exit: 1 }],
    });
    expect(code).toBe(75);
    expect(verdict).toMatchObject({ status: "parked", fault: { kind: "quota_wall" } });
    expect(near(verdict?.resume_after, started + ((4 * 24 + 6) * 60 + 37) * 60_000)).toBe(true);
  });

  test("gemini: TerminalQuotaError (daily quota): parked, no reset time known", async () => {
    const { code, verdict, stderr } = await run(world(), "gemini", {
      steps: [...lines(fixture("gemini", "daily-quota.jsonl")).map((raw) => ({ raw })), { exit: 1 }],
    });
    expect(code).toBe(75);
    expect(verdict).toMatchObject({ status: "parked", fault: { kind: "quota_wall" }, resume_after: null });
    expect(stderr).toContain("the time was not given");
  });

  test("opencode: 'The usage limit has been reached'", async () => {
    const { code, verdict } = await run(world(), "opencode", { steps: [{ fail: lines(fixture("opencode", "usage-limit.txt"))[0] }] });
    expect(code).toBe(75);
    expect(verdict).toMatchObject({ status: "parked", fault: { kind: "quota_wall" } });
  });

  test("pi: its relay of codex's usage_limit_reached after its 3 retries (as in pi issue #4172), resets_at as resume_after", async () => {
    const message = lines(fixture("pi", "usage-limit.txt"))[0];
    const { code, verdict } = await run(world(), "pi", { steps: [{ error: { status: 429, message, times: 4 } }] });
    expect(code).toBe(75);
    expect(verdict).toMatchObject({
      status: "parked",
      fault: { kind: "quota_wall" },
      resume_after: new Date(1777936568_000).toISOString(),
    });
  });

  test("pi retrying a wall is not waited out: parked at its first retry", async () => {
    const message = lines(fixture("pi", "usage-limit.txt"))[0];
    const started = performance.now();
    const { code, verdict } = await run(world(), "pi", { steps: [{ error: { status: 429, message, times: 4 } }], retrySleepMs: 60_000 });
    expect(code).toBe(75);
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(verdict).toMatchObject({
      status: "parked",
      failure: { kind: "stopped", cause: "wall" },
      fault: { kind: "quota_wall" },
      resume_after: new Date(1777936568_000).toISOString(),
    });
  });

  test("a transient 429 is still a rate limit, not a wall (exit 5)", async () => {
    const { code, verdict } = await run(world(), "codex", {
      steps: [{ fail: "unexpected status 429 Too Many Requests: Rate limit reached for requests" }],
    });
    expect(code).toBe(5);
    expect(verdict).toMatchObject({ status: "failed", fault: { kind: "rate_limit" }, resume_after: null });
  });
});

describe("agentport resume --when-ready", () => {
  test("waits until resume_after (one line), then resumes", async () => {
    const w = world();
    const resetsAt = Math.ceil(Date.now() / 1000) + 3;
    const parked = await run(w, "claude", claudeWall(resetsAt));
    expect(parked.code).toBe(75);
    const started = Date.now();
    const resumed = await agentport(["resume", "--when-ready", "--json", "--progress", "off", parked.verdict?.session_id ?? "", "go on"], {
      cwd: w.proj,
      env: { ...w.env, AGENTPORT_FAKE_SCENARIO: "text" },
    });
    expect(resumed.code).toBe(0);
    expect(Date.now()).toBeGreaterThanOrEqual(resetsAt * 1000);
    expect(Date.now() - started).toBeGreaterThan(1_000);
    expect(resumed.stderr.match(/parked until/g)?.length).toBe(1);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: "completed" });
  });

  test("Ctrl-C ends the wait: nothing resumed, exit 130", async () => {
    const w = world();
    const parked = await run(w, "claude", claudeWall(Math.floor(Date.now() / 1000) + 3600));
    const proc = Bun.spawn(
      [join(ROOT, "dist", "agentport"), "resume", "--when-ready", "--progress", "off", parked.verdict?.session_id ?? "", "go on"],
      { cwd: w.proj, env: { ...process.env, ...w.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" },
    );
    await Bun.sleep(1_500);
    proc.kill("SIGINT");
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(code).toBe(130);
    expect(stderr).toContain("was not resumed");
    const listed = await agentport(["sessions", "--json"], { cwd: w.proj, env: w.env });
    expect(JSON.parse(lines(listed.stdout)[0] ?? "{}").phases).toHaveLength(1);
  });

  test("a session that is not parked is refused (exit 2)", async () => {
    const w = world();
    const done = await run(w, "claude", { steps: [{ text: "hi" }, { result: {} }] });
    const resumed = await agentport(["resume", "--when-ready", "--progress", "off", done.verdict?.session_id ?? "", "go on"], {
      cwd: w.proj,
      env: w.env,
    });
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain("is not parked");
  });
});
