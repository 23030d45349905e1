// `agentport run --agent opencode --serve` through the compiled binary: the
// real opencode 1.18.33 as `opencode serve`, against the project's loopback
// chat-completions stand-in, offline. Text, a tool call, a refused
// permission (refused, recorded, and the model told), an exhausted 500 with
// its retries visible, the cut-stream loop stopped, resume in and out of the
// birth folder, a stall that aborts the session, a kill -9 of agentport, a
// replay of the kept events, --grace's wrap-up taken at opencode's next step,
// and a silent busy tool that is no stall.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { peerOrSkip } from "./peers/peers.ts";
import { startOpenAIStandin, type Reply } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import { removeTempDirs, spawnCollect, type Standin } from "./standins/util.ts";
import { agentport, leftAfter, makeWorld, processesIn, type World } from "./standins/world.ts";
import { BIN } from "./helpers.ts";

const OPENCODE = peerOrSkip("opencode");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

/** The run's model calls, in order (opencode's title call for a new session answered apart and not counted). */
function world(
  replies: Reply[],
  extra: Record<string, string> = {},
): World & { calls: () => number; requests: () => Record<string, any>[] } {
  let calls = 0;
  const seen: Record<string, any>[] = [];
  const standin = startOpenAIStandin((req) => {
    if (isTitleRequest(req)) return { text: "A title" };
    seen.push(req);
    return replies[Math.min(++calls, replies.length) - 1]!;
  });
  standins.push(standin);
  const w = makeWorld("agentport-e2e-opencode-serve-", standin, opencodeEnv, { AGENTPORT_OPENCODE_BIN: OPENCODE ?? "", ...extra });
  return { ...w, calls: () => calls, requests: () => seen };
}

const bash = (command: string): Reply => ({ toolCall: { name: "bash", arguments: { command, description: "work" } } });

const run = (w: World, prompt: string, extra: string[] = []) =>
  agentport(w, ["run", "--agent", "opencode", "--serve", "--json", "--progress", "lines", ...extra, "-"], {
    stdin: prompt,
    timeoutMs: 150_000,
  });

function ledgerRow(w: World): { id: string; agent_session_id: string | null; request: string | null } | null {
  const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
  try {
    return db
      .query<{ id: string; agent_session_id: string | null; request: string | null }, []>(
        "SELECT id, agent_session_id, request FROM sessions",
      )
      .get();
  } finally {
    db.close();
  }
}

function runFolder(w: World): string {
  const runs = join(w.home, "runs");
  const [only] = readdirSync(runs).sort().slice(-1);
  return join(runs, only!);
}

describe.skipIf(OPENCODE === null)("agentport run --agent opencode --serve with the real opencode 1.18.33", () => {
  test("text: the answer, the assistant message's tokens and cost, the session bound before the prompt; replay of the kept events agrees", async () => {
    const w = world([{ text: "The answer is 4.", usage: { input: 1000, output: 10 } }]);
    const { code, verdict, stderr } = await run(w, "What is 2+2?");
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
    expect(verdict?.summary).toMatchObject({ serve: true, model: "standin/standin-model" });
    const row = ledgerRow(w);
    expect(row?.id).toBe(verdict?.session_id ?? "?");
    expect(row?.agent_session_id).toBe(String(verdict?.summary.opencode_session_id));
    expect(JSON.parse(row?.request ?? "{}")).toMatchObject({ serve: true });
    // The password never leaves the run; the prompt as the prompt of every agent.
    expect(stderr).not.toContain("OPENCODE_SERVER_PASSWORD=");
    const folder = runFolder(w);
    const stream = readFileSync(join(folder, "stream.jsonl"), "utf8");
    expect(stream).toContain('"type":"session.idle"');
    expect(stream).not.toContain("plugin.added");
    const replayed = await spawnCollect([BIN, "replay", "--agent", "opencode", "--json", join(folder, "stream.jsonl")], {
      cwd: w.project,
      env: w.env,
    });
    expect(JSON.parse(replayed.stdout)).toMatchObject({ status: "completed", text: "The answer is 4.", cost_micro_usd: 1020 });
    expect(await leftAfter(w.project)).toEqual([]);
  }, 160_000);

  test("a tool call: opencode runs it over the server, then answers", async () => {
    const w = world([{ toolCall: { name: "bash", arguments: { command: "cat notes.txt", description: "read" } } }, { text: "Two lines." }]);
    const { code, verdict } = await run(w, "Read notes.txt");
    expect(code).toBe(0);
    expect(verdict?.text).toBe("Two lines.");
    expect(verdict?.summary.tool_calls).toBe(1);
  }, 160_000);

  test("a permission asked: rejected by default with a message the model gets, recorded as refused; --permission-mode bypassPermissions allows it once", async () => {
    const replies: Reply[] = [
      { toolCall: { name: "bash", arguments: { command: "touch made.txt", description: "make" } } },
      { text: "I could not." },
    ];
    const w = world(replies, { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) });
    const { code, verdict } = await run(w, "Make a file");
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ status: "completed", text: "I could not." });
    expect(verdict?.refused).toEqual([{ kind: "permission", subject: "bash: touch made.txt (rejected)" }]);
    expect(existsSync(join(w.project, "made.txt"))).toBe(false);
    const told = JSON.stringify(w.requests()[1]?.messages ?? []);
    expect(told).toContain("agentport runs this unattended and refused bash");
    const refusing = await run(world(replies, { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) }), "Make a file", [
      "--fail-on-refusal",
    ]);
    expect(refusing.code).toBe(1);
    expect(refusing.verdict?.failure?.kind).toBe("refusals");
    const allowed = world(replies, { OPENCODE_PERMISSION: JSON.stringify({ bash: "ask" }) });
    const ok = await run(allowed, "Make a file", ["--permission-mode", "bypassPermissions"]);
    expect(ok.code).toBe(0);
    expect(ok.verdict?.refused).toEqual([]);
    expect(existsSync(join(allowed.project, "made.txt"))).toBe(true);
  }, 320_000);

  test("an exhausted 500 (retry-after: 0): each retry visible on stderr, then failed, a provider error", async () => {
    const w = world([{ status: 500, body: "standin: internal error", retryAfter: 0 }]);
    const { code, verdict, stderr } = await run(w, "Say hi");
    expect(code).toBe(1);
    expect(verdict?.status).toBe("failed");
    expect(verdict?.failure?.kind).toBe("provider_error");
    expect(verdict?.summary.api_error_status).toBe(500);
    expect(Number(verdict?.summary.retries)).toBeGreaterThan(0);
    expect(stderr).toContain("retry");
    expect(w.calls()).toBeGreaterThan(1);
  }, 160_000);

  test("a stream cut before its finish reason: opencode asks again at once; stopped as a loop, the session aborted, nothing left", async () => {
    const w = world([{ text: "This stre", cut: true }]);
    const { code, verdict } = await run(w, "Say hi");
    expect(code).toBe(4);
    expect(verdict?.status).toBe("looping");
    expect(await leftAfter(w.project)).toEqual([]);
  }, 160_000);

  test("resume: the same opencode session over a new server in the birth folder; refused from another folder, zero requests", async () => {
    const w = world([{ text: "Noted." }, { text: "The word was BLUE." }]);
    const first = await run(w, "Remember the word BLUE.");
    expect(first.code).toBe(0);
    const id = first.verdict?.session_id ?? "";
    // The birth request holds --serve: the resume is served too.
    const resumed = await agentport(w, ["resume", id, "--json", "-"], { stdin: "Which word?", timeoutMs: 150_000 });
    expect(resumed.code).toBe(0);
    expect(resumed.verdict).toMatchObject({ agent: "opencode", session_id: id, text: "The word was BLUE." });
    expect(resumed.verdict?.summary).toMatchObject({ serve: true, opencode_session_id: first.verdict?.summary.opencode_session_id });
    expect(JSON.stringify(w.requests()[1]?.messages)).toContain("Remember the word BLUE.");
    const elsewhere = join(w.dir, "elsewhere");
    mkdirSync(elsewhere);
    const before = w.calls();
    const refused = await agentport(w, ["resume", id, "--json", "-"], { cwd: elsewhere, stdin: "Which word?" });
    expect(refused.code).toBe(3);
    expect(refused.verdict).toMatchObject({ status: "refused" });
    expect(w.calls()).toBe(before);
  }, 320_000);

  test("a bash tool that hangs: the stall aborts the session, then the server and the tool are killed", async () => {
    const w = world([
      { toolCall: { name: "bash", arguments: { command: "touch started.txt; sleep 120; echo late", description: "wait" } } },
      { text: "late" },
    ]);
    const { code, verdict } = await run(w, "Wait", ["--stall", "8"]);
    expect(existsSync(join(w.project, "started.txt"))).toBe(true);
    expect(code).toBe(4);
    expect(verdict?.status).toBe("stalled");
    expect(await leftAfter(w.project)).toEqual([]);
  }, 160_000);

  test("kill -9 of agentport mid-turn: the keeper takes the server and its tool process", async () => {
    const w = world([
      { toolCall: { name: "bash", arguments: { command: "touch started.txt; sleep 120", description: "wait" } } },
      { text: "late" },
    ]);
    const child = Bun.spawn([BIN, "run", "--agent", "opencode", "--serve", "--json", "-"], {
      cwd: w.project,
      env: w.env,
      stdin: new TextEncoder().encode("Wait"),
      stdout: "ignore",
      stderr: "ignore",
    });
    const until = performance.now() + 60_000;
    while (!existsSync(join(w.project, "started.txt")) && performance.now() < until) await Bun.sleep(100);
    expect(existsSync(join(w.project, "started.txt"))).toBe(true);
    // The shell has touched the file; its sleep may not be exec'd yet on a busy box.
    const sleeping = () => processesIn(w.project).some((p) => p.includes("sleep 120"));
    for (const end = performance.now() + 10_000; !sleeping() && performance.now() < end; ) await Bun.sleep(100);
    expect(sleeping()).toBe(true);
    child.kill("SIGKILL");
    await child.exited;
    expect(await leftAfter(w.project, 5_000)).toEqual([]);
  }, 120_000);

  test("--grace: the wrap-up reaches the model at opencode's next step; the run completes in the grace period", async () => {
    const w = world([bash("sleep 6"), { text: "Saved my work. Done." }]);
    const { code, verdict } = await run(w, "Work for a while", ["--timeout", "40", "--grace", "36"]);
    expect({ code, status: verdict?.status, text: verdict?.text }).toEqual({ code: 0, status: "completed", text: "Saved my work. Done." });
    expect(verdict?.summary).toMatchObject({ wrap_up: "timeout", wrap_up_finished: true });
    expect(JSON.stringify(w.requests()[1]?.messages ?? [])).toContain("Time is nearly up: finish now, save your work and report.");
    expect(await leftAfter(w.project)).toEqual([]);
  }, 160_000);

  test("a silent bash tool that burns CPU longer than --stall is no stall (the server's tree is sampled)", async () => {
    const w = world([bash("end=$(($(date +%s)+25)); while [ $(date +%s) -lt $end ]; do :; done"), { text: "Busy, then done." }]);
    const { code, verdict } = await run(w, "Compute", ["--stall", "12"]);
    expect({ code, status: verdict?.status, stall: verdict?.summary.stall_kind }).toEqual({
      code: 0,
      status: "completed",
      stall: undefined,
    });
    expect(verdict?.text).toBe("Busy, then done.");
  }, 160_000);

  test("--serve for another agent: one line, exit 2", async () => {
    const w = world([{ text: "x" }]);
    const ran = await agentport(w, ["run", "--agent", "codex", "--serve", "hi"]);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("only opencode has a serve mode");
  });
});
