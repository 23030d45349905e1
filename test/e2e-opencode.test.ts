// Real opencode 1.18.33 (the test/peers package), driven through the compiled
// binary, against the project's loopback chat-completions stand-in. No key,
// no network: the stand-in is opencode's only provider (ground truth §1).
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { peerOrSkip } from "./peers/peers.ts";
import { startOpenAIStandin, type Reply } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import { removeTempDirs, type Standin } from "./standins/util.ts";
import { agentport, leftAfter, makeWorld, type World } from "./standins/world.ts";

const OPENCODE = peerOrSkip("opencode");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

/** The run's model calls, in order (opencode's title call for a new session answered apart and not counted). */
function world(replies: Reply[], extra: Record<string, string> = {}): World & { calls: () => number } {
  let calls = 0;
  const standin = startOpenAIStandin((req) =>
    isTitleRequest(req) ? { text: "A title" } : replies[Math.min(++calls, replies.length) - 1]!,
  );
  standins.push(standin);
  const w = makeWorld("agentport-e2e-opencode-", standin, opencodeEnv, { AGENTPORT_OPENCODE_BIN: OPENCODE ?? "", ...extra });
  return { ...w, calls: () => calls };
}

const run = (w: World, prompt: string, extra: string[] = []) =>
  agentport(w, ["run", "--agent", "opencode", "--json", "--progress", "lines", ...extra, "-"], { stdin: prompt, timeoutMs: 150_000 });

function ledgerRow(w: World): { id: string; agent_session_id: string | null } | null {
  const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
  try {
    return db.query<{ id: string; agent_session_id: string | null }, []>("SELECT id, agent_session_id FROM sessions").get();
  } finally {
    db.close();
  }
}

describe.skipIf(OPENCODE === null)("agentport run --agent opencode with the real opencode 1.18.33", () => {
  test("a text answer: the text, tokens and opencode's cost summed over the steps, its session bound to the declared one", async () => {
    const w = world([{ text: "The answer is 4.", usage: { input: 1000, output: 10 } }]);
    const { code, verdict } = await run(w, "What is 2+2?");
    expect(code).toBe(0);
    expect(verdict).toMatchObject({
      agent: "opencode",
      status: "completed",
      ok: true,
      text: "The answer is 4.",
      cost_micro_usd: 1000 * 1 + 10 * 2,
      stop_reason: "stop",
    });
    expect(verdict?.tokens).toEqual({ input: 1000, output: 10, cache_read: 0, cache_write: 0 });
    const row = ledgerRow(w);
    expect(row?.id).toBe(verdict?.session_id ?? "?");
    expect(row?.agent_session_id).toStartWith("ses_");
    expect(row?.agent_session_id).toBe(String(verdict?.summary.opencode_session_id));
  }, 160_000);

  test("the request reaches the real opencode: plan as its plan agent, thinking as --variant, the pass-through appended", async () => {
    const w = world([{ text: "Done." }]);
    const ran = await agentport(
      w,
      ["run", "--agent", "opencode", "--json", "--permission-mode", "plan", "--thinking", "high", "-", "--", "--title", "Agentport title"],
      { stdin: "Say hi", timeoutMs: 150_000 },
    );
    expect({ code: ran.code, stderr: ran.code === 0 ? "" : ran.stderr }).toEqual({ code: 0, stderr: "" });
    expect(ran.verdict?.text).toBe("Done.");
    // opencode's plan agent reminds the model it is in plan mode.
    expect(JSON.stringify(w.standin.requests.at(-1))).toContain("Plan mode ACTIVE");
  });

  test("a tool call: opencode runs it, then answers", async () => {
    const w = world([{ toolCall: { name: "bash", arguments: { command: "cat notes.txt", description: "read" } } }, { text: "Two lines." }]);
    const { code, verdict } = await run(w, "Read notes.txt");
    expect(code).toBe(0);
    expect(verdict?.text).toBe("Two lines.");
    expect(verdict?.summary.tool_calls).toBe(1);
  }, 160_000);

  test("a refused permission: opencode auto-rejects it and exits 0; the verdict is not ok and names it", async () => {
    const w = world([{ toolCall: { name: "bash", arguments: { command: "touch made.txt", description: "make" } } }, { text: "never" }], {
      OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }),
    });
    const { code, verdict } = await run(w, "Make a file");
    expect(code).toBe(1);
    expect(verdict).toMatchObject({ status: "failed", ok: false });
    expect(verdict?.failure?.kind).toBe("agent_error");
    expect(verdict?.refused).toEqual([{ kind: "permission", subject: "bash (auto-rejected)" }]);
    expect(w.calls()).toBe(1);
  }, 160_000);

  test("an exhausted 500 (retry-after: 0 keeps opencode's retries short): failed, a provider error", async () => {
    const w = world([{ status: 500, body: "standin: internal error", retryAfter: 0 }]);
    const { code, verdict } = await run(w, "Say hi");
    expect(code).toBe(1);
    expect(verdict?.status).toBe("failed");
    expect(verdict?.failure?.kind).toBe("provider_error");
    expect(verdict?.summary.api_error_status).toBe(500);
    expect(w.calls()).toBeGreaterThan(1);
  }, 160_000);

  test("a stream cut before its finish reason: opencode asks again forever; stopped as a loop, nothing left", async () => {
    const w = world([{ text: "This stre", cut: true }]);
    const { code, verdict } = await run(w, "Say hi");
    expect(code).toBe(4);
    expect(verdict?.status).toBe("looping");
    expect(await leftAfter(w.project)).toEqual([]);
  }, 160_000);

  test("resume: the same opencode session in the birth folder; refused from another, zero requests", async () => {
    const w = world([{ text: "Noted." }, { text: "The word was BLUE." }]);
    const first = await run(w, "Remember the word BLUE.");
    expect(first.code).toBe(0);
    const id = first.verdict?.session_id ?? "";
    const resumed = await agentport(w, ["resume", id, "--json", "-"], { stdin: "Which word?", timeoutMs: 150_000 });
    expect(resumed.code).toBe(0);
    expect(resumed.verdict).toMatchObject({ agent: "opencode", session_id: id, text: "The word was BLUE." });
    expect(resumed.verdict?.summary.opencode_session_id).toBe(first.verdict?.summary.opencode_session_id);
    const elsewhere = join(w.dir, "elsewhere");
    mkdirSync(elsewhere);
    const before = w.calls();
    const refused = await agentport(w, ["resume", id, "--json", "-"], { cwd: elsewhere, stdin: "Which word?" });
    expect(refused.code).toBe(3);
    expect(refused.verdict).toMatchObject({ status: "refused" });
    expect(w.calls()).toBe(before);
  }, 320_000);

  test("a bash tool that outlives opencode: the stall stops the run and every descendant is killed", async () => {
    const w = world([
      { toolCall: { name: "bash", arguments: { command: "touch started.txt; sleep 120; echo late", description: "wait" } } },
      { text: "late" },
    ]);
    // Long enough for opencode's start-up (it prints nothing until the model answers).
    const { code, verdict } = await run(w, "Wait", ["--stall", "40"]);
    expect(existsSync(join(w.project, "started.txt"))).toBe(true);
    expect(code).toBe(4);
    expect(verdict?.status).toBe("stalled");
    expect(await leftAfter(w.project)).toEqual([]);
  }, 160_000);
});
