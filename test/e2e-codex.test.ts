// Real codex 0.169.0 (the test/peers package), driven through the compiled
// binary, against a loopback stand-in of the OpenAI Responses API. No key,
// no network: the stand-in is codex's only provider (ground truth §1).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { peerOrSkip } from "./peers/peers.ts";
import { codexEnv, startResponsesStandin, type ResponsesScript } from "./standins/responses.ts";
import { removeTempDirs, type Standin } from "./standins/util.ts";
import { agentport, leftAfter, makeWorld, type World } from "./standins/world.ts";

const CODEX = peerOrSkip("codex");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

function world(script: ResponsesScript, retries = { request: 1, stream: 1, idleMs: 60_000 }): World {
  const standin = startResponsesStandin(script);
  standins.push(standin);
  return makeWorld("agentport-e2e-codex-", standin, (dir, url) => codexEnv(dir, url, retries), { AGENTPORT_CODEX_BIN: CODEX ?? "" });
}

const run = (w: World, prompt: string, extra: string[] = []) =>
  agentport(w, ["run", "--agent", "codex", "--json", "--progress", "lines", ...extra, "-"], { stdin: prompt });

function ledgerRow(w: World): { id: string; agent_session_id: string | null; cwd: string } | null {
  const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
  try {
    return db
      .query<{ id: string; agent_session_id: string | null; cwd: string }, []>("SELECT id, agent_session_id, cwd FROM sessions")
      .get();
  } finally {
    db.close();
  }
}

describe.skipIf(CODEX === null)("agentport run --agent codex with the real codex 0.169.0", () => {
  test("a text answer: the text, tokens, no cost, the thread bound to the declared session", async () => {
    const w = world([{ text: "The answer is 4.", usage: { input: 1000, output: 10 } }]);
    const { code, verdict, stderr } = await run(w, "What is 2+2?");
    expect(code).toBe(0);
    expect(verdict).toMatchObject({
      agent: "codex",
      status: "completed",
      ok: true,
      text: "The answer is 4.",
      cost_micro_usd: null,
      stop_reason: null,
    });
    expect(verdict?.tokens).toEqual({ input: 1000, output: 10, cache_read: 0, cache_write: 0 });
    expect(stderr).toContain("codex: started");
    // The prompt went in on stdin, whole.
    expect(JSON.stringify(w.standin.requests[0]?.input)).toContain("What is 2+2?");
    const row = ledgerRow(w);
    expect(row?.id).toBe(verdict?.session_id ?? "?");
    expect(row?.agent_session_id).toBe(String(verdict?.summary.thread_id));
    expect(row?.agent_session_id).not.toBe(row?.id);
    expect(row?.cwd).toBe(w.project);
  });

  test("the request reaches the real codex: the system prompt as developer_instructions, the pass-through as a -c override", async () => {
    const w = world([{ text: "Done." }]);
    const ran = await agentport(
      w,
      [
        "run",
        "--agent",
        "codex",
        "--json",
        "--append-system-prompt",
        "HOUSE RULES: answer in French",
        "-",
        "--",
        "--config",
        "model_reasoning_summary=detailed",
      ],
      { stdin: "Say hi" },
    );
    expect(ran.code).toBe(0);
    const request = JSON.stringify(w.standin.requests[0]);
    expect(request).toContain("HOUSE RULES: answer in French");
    expect(request).toContain('"summary":"detailed"');
  });

  test("a tool call: codex runs it, the result goes back, progress names the tool", async () => {
    const w = world([{ toolCall: { name: "exec_command", arguments: { cmd: "cat notes.txt" } } }, { text: "The file has two lines." }]);
    const { code, verdict, stderr } = await run(w, "Read notes.txt");
    expect(code).toBe(0);
    expect(verdict?.text).toBe("The file has two lines.");
    expect(verdict?.summary.tool_calls).toBe(1);
    expect(stderr).toContain("codex: tool shell");
    expect(JSON.stringify(w.standin.requests[1]?.input)).toContain("line two");
  });

  test("an unknown tool is refused invisibly in the stream: the verdict counts it from stderr", async () => {
    const w = world([{ toolCall: { name: "no_such_tool", arguments: {} } }, { text: "Done." }]);
    const { code, verdict } = await run(w, "Call it");
    expect(code).toBe(0);
    expect(verdict?.refused).toEqual([{ kind: "permission", subject: "unsupported tool no_such_tool" }]);
    expect(verdict?.summary.refused_seen_in).toBe("stderr");
  });

  test("an exhausted 500: failed, a provider error (exit 1), the retries counted", async () => {
    const w = world([{ status: 500 }]);
    const { code, verdict } = await run(w, "Say hi");
    expect(code).toBe(1);
    expect(verdict).toMatchObject({ status: "failed", env_fault: false });
    expect(verdict?.fault?.kind).toBe("server_error");
    expect(verdict?.failure?.message).toContain("codex: the turn failed");
    expect(verdict?.summary.api_retries).toBe(1);
    expect(w.standin.requests.length).toBe(4);
  });

  test("a 401: an auth fault of the environment, exit 5", async () => {
    const w = world([{ status: 401, body: "Incorrect API key provided." }]);
    const { code, verdict } = await run(w, "Say hi");
    expect(code).toBe(5);
    expect(verdict).toMatchObject({ status: "failed", env_fault: true });
    expect(verdict?.fault?.kind).toBe("auth");
  });

  test("resume in the birth folder: the same thread, the history sent, the phase's own tokens", async () => {
    const w = world((_req, n) =>
      n === 1 ? { text: "Noted.", usage: { input: 1000, output: 10 } } : { text: "The word was BLUE.", usage: { input: 2000, output: 20 } },
    );
    const first = await run(w, "Remember the word BLUE.");
    expect(first.code).toBe(0);
    const id = first.verdict?.session_id ?? "";
    const resumed = await agentport(w, ["resume", id, "--json", "-"], { stdin: "Which word?" });
    expect(resumed.code).toBe(0);
    expect(resumed.verdict).toMatchObject({ agent: "codex", session_id: id, text: "The word was BLUE." });
    expect(resumed.verdict?.summary.thread_id).toBe(first.verdict?.summary.thread_id);
    expect(JSON.stringify(w.standin.requests[1]?.input)).toContain("Remember the word BLUE.");
    // codex reports the thread's running total (3000 / 30): the phase's share is what is recorded.
    expect(resumed.verdict?.tokens).toEqual({ input: 2000, output: 20, cache_read: 0, cache_write: 0 });
  });

  test("resume from another folder: refused before codex runs, zero requests", async () => {
    const w = world([{ text: "Noted." }]);
    const first = await run(w, "Remember BLUE.");
    const elsewhere = join(w.dir, "elsewhere");
    mkdirSync(elsewhere);
    const before = w.standin.requests.length;
    const refused = await agentport(w, ["resume", first.verdict?.session_id ?? "", "--json", "-"], {
      cwd: elsewhere,
      stdin: "Which word?",
    });
    expect(refused.code).toBe(3);
    expect(refused.verdict).toMatchObject({ status: "refused", tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 } });
    expect(refused.stderr).toContain(`was born in ${w.project}`);
    expect(w.standin.requests.length).toBe(before);
  });

  test("a stand-in that hangs mid-stream: stalled, exit 4, nothing of the run left", async () => {
    const w = world([{ hang: true }]);
    const { code, verdict } = await run(w, "Say hi", ["--stall", "3"]);
    expect(code).toBe(4);
    expect(verdict?.status).toBe("stalled");
    expect(await leftAfter(w.project)).toEqual([]);
  });

  test("no server at all: codex retries the connection forever, so the stall is a network fault (exit 5)", async () => {
    const w = world([{ text: "never" }]);
    await w.standin.stop();
    const { code, verdict } = await run(w, "Say hi", ["--stall", "3"]);
    expect(code).toBe(5);
    expect(verdict).toMatchObject({ status: "stalled", env_fault: true, summary: { stopped_by: "stall", waiting_for_network: true } });
    expect(verdict?.fault).toEqual({ kind: "network", evidence: "Connection failed: error sending request" });
  });
});
