// Real gemini 0.61.0 (the test/peers package), driven through the compiled
// binary, against a loopback stand-in of the Gemini API. No key, no network:
// the base URL points at the stand-in, the model is pinned (no router call).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { peerOrSkip } from "./peers/peers.ts";
import { geminiWorld, type GeminiScript } from "./standins/gemini.ts";
import { removeTempDirs, type Standin } from "./standins/util.ts";
import { agentport, leftAfter, type World } from "./standins/world.ts";

const GEMINI = peerOrSkip("gemini");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

const world = (script: GeminiScript): World => geminiWorld("agentport-e2e-gemini-", script, standins, GEMINI ?? "");

const run = (w: World, prompt: string, extra: string[] = []) =>
  agentport(w, ["run", "--agent", "gemini", "--json", "--progress", "lines", ...extra, "-"], { stdin: prompt });

describe.skipIf(GEMINI === null)("agentport run --agent gemini with the real gemini 0.61.0", () => {
  test("a text answer: the deltas as the text, tokens, no cost, the chosen id declared and echoed", async () => {
    const w = world([{ text: "The answer is 4.", usage: { input: 1000, output: 10 } }]);
    const { code, verdict, stderr } = await run(w, "What is 2+2?");
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ agent: "gemini", status: "completed", ok: true, text: "The answer is 4.", cost_micro_usd: null });
    expect(verdict?.tokens?.output).toBe(10);
    expect(stderr).toContain("gemini: started");
    // The model is pinned: one call, to the pinned model, with the prompt from stdin.
    expect(w.standin.log.filter((r) => r.method === "POST").map((r) => r.path)).toEqual([
      "/v1beta/models/gemini-2.5-flash:streamGenerateContent",
    ]);
    expect(JSON.stringify(w.standin.requests[0]?.contents)).toContain("What is 2+2?");
    const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
    const row = db.query<{ id: string; agent_session_id: string; cwd: string }, []>("SELECT id, agent_session_id, cwd FROM sessions").get();
    db.close();
    expect(row).toEqual({ id: verdict?.session_id ?? "?", agent_session_id: verdict?.session_id ?? "?", cwd: w.project });
  });

  test("the request reaches the real gemini: plan as --approval-mode, the pass-through appended, the envelope told after the prompt", async () => {
    const w = world([{ text: 'Done.\n```json\n{"status":"success","summary":"ok","changed_files":[]}\n```' }]);
    const ran = await agentport(
      w,
      ["run", "--agent", "gemini", "--json", "--permission-mode", "plan", "--envelope", "-", "--", "--include-directories", w.project],
      { stdin: "Say hi" },
    );
    expect(ran.code).toBe(0);
    expect(ran.verdict?.envelope).toMatchObject({ status: "success" });
    expect(JSON.stringify(w.standin.requests[0]?.contents)).toContain("This task ends with a structured report, the envelope");
  });

  test("a tool call: the final text is the reply after the tool", async () => {
    const w = world([
      { text: "Let me look.", toolCall: { name: "read_file", arguments: { file_path: "notes.txt" } } },
      { text: "Two lines." },
    ]);
    const { code, verdict, stderr } = await run(w, "Read notes.txt");
    expect(code).toBe(0);
    expect(verdict?.text).toBe("Two lines.");
    expect(stderr).toContain("gemini: tool read_file notes.txt");
    expect(JSON.stringify(w.standin.requests[1]?.contents)).toContain("line two");
  });

  test("an exhausted 500: result.status error (gemini exits 244), a provider error, exit 1", async () => {
    const w = world([{ status: 500 }]);
    const { code, verdict } = await run(w, "Say hi");
    expect(code).toBe(1);
    expect(verdict).toMatchObject({ status: "failed", env_fault: false, summary: { result_status: "error", exit_code: 244 } });
    expect(verdict?.fault?.kind).toBe("server_error");
    expect(w.standin.requests.length).toBe(2);
  });

  test("a 401: an auth fault of the environment, exit 5, no retry", async () => {
    const w = world([{ status: 401, body: "API key not valid." }]);
    const { code, verdict } = await run(w, "Say hi");
    expect(code).toBe(5);
    expect(verdict).toMatchObject({ status: "failed", env_fault: true });
    expect(verdict?.fault?.kind).toBe("auth");
    expect(w.standin.requests.length).toBe(1);
  });

  test("resume in the birth folder: the same session id, the history sent", async () => {
    const w = world((_req, n) => ({ text: n === 1 ? "Noted." : "The word was BLUE." }));
    const first = await run(w, "Remember the word BLUE.");
    expect(first.code).toBe(0);
    const id = first.verdict?.session_id ?? "";
    const resumed = await agentport(w, ["resume", id, "--json", "-"], { stdin: "Which word?" });
    expect(resumed.code).toBe(0);
    expect(resumed.verdict).toMatchObject({ agent: "gemini", session_id: id, text: "The word was BLUE." });
    expect(JSON.stringify(w.standin.requests[1]?.contents)).toContain("Remember the word BLUE.");
  });

  test("resume from another folder: refused before gemini runs, zero requests", async () => {
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
    expect(refused.verdict?.status).toBe("refused");
    expect(w.standin.requests.length).toBe(before);
  });

  test("a stand-in that hangs after 200: stalled, exit 4, nothing of the run left", async () => {
    const w = world([{ hang: true }]);
    const { code, verdict } = await run(w, "Say hi", ["--stall", "4"]);
    expect(code).toBe(4);
    expect(verdict?.status).toBe("stalled");
    expect(await leftAfter(w.project)).toEqual([]);
  });

  test("a shell tool (its own session) still running when the run stalls: nothing of it is left", async () => {
    const w = world([
      { toolCall: { name: "run_shell_command", arguments: { command: "sleep 120", description: "wait" } } },
      { text: "never" },
    ]);
    const { code, verdict } = await run(w, "Wait", ["--stall", "15", "--permission-mode", "bypassPermissions"]);
    expect(code).toBe(4);
    expect(verdict?.status).toBe("stalled");
    expect(verdict?.summary.tool_calls).toBe(1);
    expect(await leftAfter(w.project)).toEqual([]);
  });
});
