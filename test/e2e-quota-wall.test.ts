// Quota walls with the real CLIs (issue 27 §3), through the compiled binary, each against its
// loopback stand-in answering the way its provider answers a usage limit (test/fixtures/<agent>/quota/).
// claude's wall is in e2e-claude.test.ts. What each real CLI did here:
// - codex 0.169.0, 429 {"error":{"type":"usage_limit_reached","resets_at":…}}: no retry, one request;
//   it prints "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit
//   https://chatgpt.com/settings/usage to purchase more credits or try again at 7:49 AM." with a typographic
//   apostrophe (the recorded fixture has "You've"), and the reset only as a local clock time (read back in
//   the zone codex shares with agentport): parked, resume_after that moment.
// - gemini 0.61.0, 429 RESOURCE_EXHAUSTED with a per-day QuotaFailure: its TerminalQuotaError, one request,
//   "[API Error: You have exhausted your daily quota on this model.] Please wait and try again later. …":
//   parked at once, no reset time in the text.
// - pi 0.73.1 (openai-completions provider), 429 usage_limit_reached: pi retries it; its relay keeps only
//   "429 The usage limit has been reached" (resets_at is dropped; the body with resets_at comes only from
//   its openai-codex provider, a ChatGPT login the stand-in cannot play). agentport stops it at the first retry.
// - opencode 1.18.33, 429 {"type":"FreeUsageLimitError"}: opencode retries it without end (its retry rule
//   returns "Free usage exceeded, subscribe to Go" as a retry message). `opencode run` prints nothing of the
//   retries, so plain runs end at agentport's timeout (exit 4, no fault); with --serve the retry message
//   is seen and the run is parked at the first retry of the wall, as pi's is.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { ROOT } from "./helpers.ts";
import { peerOrSkip } from "./peers/peers.ts";
import { geminiWorld } from "./standins/gemini.ts";
import { piEnv, startOpenAIStandin } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import { codexEnv, startResponsesStandin } from "./standins/responses.ts";
import { removeTempDirs, type ErrorReply, type Standin } from "./standins/util.ts";
import { agentport, leftAfter, makeWorld, type World } from "./standins/world.ts";

const CODEX = peerOrSkip("codex");
const GEMINI = peerOrSkip("gemini");
const OPENCODE = peerOrSkip("opencode");
const PI = join(ROOT, "node_modules", ".bin", "pi");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

const run = (w: World, agent: string, extra: string[] = []) =>
  agentport(w, ["run", "--agent", agent, "--json", ...extra, "-"], { stdin: "Say hi", timeoutMs: 120_000 });

const posts = (w: World) => w.standin.log.filter((r) => r.method === "POST").length;

const parked = { status: "parked", ok: false, env_fault: true, fault: { kind: "quota_wall" } };

/** OpenAI's usage-limit 429 body (codex's UsageLimitReached; pi issue #4172), resetting in three hours. */
function usageLimit(): ErrorReply {
  const now = Math.floor(Date.now() / 1000);
  const error = { type: "usage_limit_reached", message: "The usage limit has been reached", plan_type: "plus" };
  return { status: 429, body: { error: { ...error, resets_at: now + 10_800, resets_in_seconds: 10_800 } } };
}

describe.skipIf(CODEX === null)("codex 0.169.0 at its usage limit", () => {
  test("one request, no retry: parked, exit 75, its typographic “You’ve hit your usage limit” read as the wall, its local reset time as resume_after", async () => {
    const standin = startResponsesStandin([usageLimit()]);
    standins.push(standin);
    const w = makeWorld("agentport-quota-codex-", standin, (dir, url) => codexEnv(dir, url, { request: 1, stream: 1, idleMs: 60_000 }), {
      AGENTPORT_CODEX_BIN: CODEX ?? "",
    });
    const resetAt = Date.now() + 10_800_000;
    const { code, verdict, stderr } = await run(w, "codex");
    expect(verdict?.failure?.message).toContain("You’ve hit your usage limit");
    expect(verdict?.failure?.message).toMatch(/try again at (\w{3} \d{1,2}\w\w, \d{4} )?\d{1,2}:\d\d [AP]M/);
    expect(verdict).toMatchObject(parked);
    // codex says the reset as a local clock time, cut to the minute: read back in the same zone.
    const resumeAfter = Date.parse(String(verdict?.resume_after));
    expect(resumeAfter).toBeGreaterThan(resetAt - 120_000);
    expect(resumeAfter).toBeLessThanOrEqual(resetAt + 60_000);
    expect(code).toBe(75);
    expect(posts(w)).toBe(1);
    expect(stderr).toContain(`agentport resume --when-ready ${verdict?.session_id}`);
  });
});

describe.skipIf(GEMINI === null)("gemini 0.61.0 at its daily quota", () => {
  test("429 RESOURCE_EXHAUSTED, per-day QuotaFailure: its TerminalQuotaError, one request, parked at once, exit 75", async () => {
    const violation = {
      quotaMetric: "generativelanguage.googleapis.com/generate_content_free_tier_requests",
      quotaId: "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
      quotaDimensions: { location: "global", model: "gemini-2.5-flash" },
      quotaValue: "250",
    };
    const wall: ErrorReply = {
      status: 429,
      body: {
        error: {
          code: 429,
          message: `Quota exceeded for metric: ${violation.quotaMetric}, limit: 250`,
          status: "RESOURCE_EXHAUSTED",
          details: [{ "@type": "type.googleapis.com/google.rpc.QuotaFailure", violations: [violation] }],
        },
      },
    };
    const w = geminiWorld("agentport-quota-gemini-", [wall], standins, GEMINI ?? "");
    const { code, verdict } = await run(w, "gemini");
    expect(verdict?.failure?.message).toContain("You have exhausted your daily quota on this model.");
    expect(verdict).toMatchObject({ ...parked, resume_after: null });
    expect(code).toBe(75);
    expect(posts(w)).toBe(1);
  });
});

describe("pi 0.73.1 relaying its provider's usage limit", () => {
  test("429 usage_limit_reached: stopped at pi's first retry, parked, exit 75 (its relay drops resets_at)", async () => {
    const standin = startOpenAIStandin([usageLimit()]);
    standins.push(standin);
    const w = makeWorld("agentport-quota-pi-", standin, piEnv, { AGENTPORT_PI_BIN: PI, AGENTPORT_GATEWAY: "" });
    const { code, verdict } = await run(w, "pi", ["--model", "standin/standin-model"]);
    expect(verdict).toMatchObject({
      ...parked,
      fault: { kind: "quota_wall", evidence: "429 The usage limit has been reached" },
      failure: { kind: "stopped", cause: "wall" },
      resume_after: null,
    });
    expect(code).toBe(75);
    expect(posts(w)).toBeLessThanOrEqual(2);
    expect(await leftAfter(w.project)).toEqual([]);
  });
});

describe.skipIf(OPENCODE === null)("opencode 1.18.33 at its free-tier limit (retried by opencode without end)", () => {
  const world = () => {
    const wall: ErrorReply = {
      status: 429,
      body: { type: "FreeUsageLimitError", message: "Rate limit exceeded. Please try again later." },
    };
    const standin = startOpenAIStandin((req) => (isTitleRequest(req) ? { text: "A title" } : wall));
    standins.push(standin);
    return makeWorld("agentport-quota-opencode-", standin, opencodeEnv, { AGENTPORT_OPENCODE_BIN: OPENCODE ?? "" });
  };

  test("opencode run prints none of its retries: the run ends at the timeout, exit 4, no fault", async () => {
    const w = world();
    const { code, verdict } = await run(w, "opencode", ["--timeout", "12"]);
    expect(verdict).toMatchObject({ status: "timeout", fault: null, summary: { records: 0 } });
    expect(code).toBe(4);
    expect(posts(w)).toBeGreaterThan(1);
  });

  test("--serve sees the retry message: stopped at its first wall retry, parked, exit 75 (not waited out to the timeout)", async () => {
    const w = world();
    const { code, verdict } = await run(w, "opencode", ["--serve", "--timeout", "90"]);
    expect(verdict).toMatchObject({
      ...parked,
      fault: { kind: "quota_wall", evidence: "Free usage exceeded, subscribe to Go" },
      failure: { kind: "stopped", cause: "wall" },
      resume_after: null,
    });
    expect(code).toBe(75);
    expect(Number(verdict?.summary.retries)).toBeGreaterThan(0);
  });
});
