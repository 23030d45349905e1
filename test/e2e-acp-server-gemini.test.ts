// `agentport acp --agent gemini` with the real gemini 0.61.0 (test/peers) on the
// loopback Gemini API stand-in, driven by a small ACP client: each prompt is a
// supervised gemini run whose tool calls come as updates and whose verdict
// ends the turn; a second prompt resumes gemini's own session; session/load
// holds the birth-folder rule; session/cancel stops a run hanging on the model.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { Database } from "bun:sqlite";
import { peerOrSkip } from "./peers/peers.ts";
import { AcpPeer } from "./acp-client.ts";
import { geminiWorld, type GeminiScript } from "./standins/gemini.ts";
import { removeTempDirs, type Standin } from "./standins/util.ts";
import { leftAfter, processesIn, type World } from "./standins/world.ts";
import { BIN } from "./helpers.ts";

const GEMINI = peerOrSkip("gemini");
const standins: Standin[] = [];
const peers: AcpPeer[] = [];
afterEach(() => {
  for (const p of peers.splice(0)) p.kill();
});
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

const world = (script: GeminiScript): World => geminiWorld("agentport-e2e-acp-gemini-", script, standins, GEMINI ?? "");

function serve(w: World, cwd = w.project): AcpPeer {
  const peer = new AcpPeer(["--agent", "gemini"], { cwd, env: w.env });
  peers.push(peer);
  return peer;
}

const prompt = (peer: AcpPeer, sessionId: string, text: string) =>
  peer.request("session/prompt", { sessionId, prompt: [{ type: "text", text }] }, 150_000);

async function newSession(peer: AcpPeer, cwd: string): Promise<string> {
  await peer.initialize();
  const made = await peer.request("session/new", { cwd, mcpServers: [] });
  expect(made.error).toBeUndefined();
  return made.result.sessionId as string;
}

/** What runs in `dir` that is not agentport itself. */
const agentsIn = (dir: string) => processesIn(dir).filter((p) => !p.includes(BIN));

const posts = (w: World) => w.standin.log.filter((r) => r.method === "POST").length;

describe.skipIf(GEMINI === null)("agentport acp fronting the real gemini 0.61.0", () => {
  test("a tool call forwarded as updates, end_turn with the verdict; a second prompt resumes gemini's session with its history; session/load refused from another folder (zero requests), taken in the birth folder", async () => {
    const w = world((_req, n) =>
      n === 1
        ? { text: "Let me look.", toolCall: { name: "read_file", arguments: { file_path: "notes.txt" } } }
        : n === 2
          ? { text: "Two lines.", usage: { input: 1000, output: 10 } }
          : { text: "It had two lines." },
    );
    const peer = serve(w);
    const sessionId = await newSession(peer, w.project);
    const first = await prompt(peer, sessionId, "Read notes.txt");
    expect(first.error).toBeUndefined();
    expect(first.result.stopReason).toBe("end_turn");
    expect(first.result._meta.agentport.verdict).toMatchObject({
      agent: "gemini",
      status: "completed",
      ok: true,
      text: "Two lines.",
      session_id: sessionId,
      cost_micro_usd: null,
    });
    // The turn's usage, both model calls of it, as the verdict counts it.
    expect(first.result.usage?.outputTokens).toBe(first.result._meta.agentport.verdict.tokens.output);
    expect(first.result.usage?.outputTokens).toBeGreaterThanOrEqual(10);
    const updates = peer.updates(sessionId);
    expect(updates.filter((u) => u.sessionUpdate === "tool_call").map((u) => [u.kind, u.title])).toEqual([
      ["read", "read_file: notes.txt"],
    ]);
    expect(updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u) => u.status)).toEqual(["completed"]);
    expect(updates.at(-1)).toEqual({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Two lines." } });
    // The real gemini read the real file: its content went back to the model.
    expect(JSON.stringify(w.standin.requests[1]?.contents)).toContain("line two");

    const second = await prompt(peer, sessionId, "How many lines?");
    expect(second.result?._meta.agentport.verdict).toMatchObject({ status: "completed", text: "It had two lines.", session_id: sessionId });
    // gemini resumed its own session: the first turn's prompt is in the history it sent.
    expect(JSON.stringify(w.standin.requests[2]?.contents)).toContain("Read notes.txt");
    expect(await peer.close()).toBe(0);

    const db = new Database(join(w.home, "ledger.sqlite"), { readonly: true });
    const phases = db.query<{ kind: string }, []>("SELECT kind FROM phases ORDER BY seq").all();
    const session = db.query<{ agent: string; cwd: string }, []>("SELECT agent, cwd FROM sessions").all();
    db.close();
    expect(phases.map((p) => p.kind)).toEqual(["run", "resume"]);
    expect(session).toEqual([{ agent: "gemini", cwd: w.project }]);

    const elsewhere = join(w.dir, "elsewhere");
    mkdirSync(elsewhere);
    const before = posts(w);
    const other = serve(w, elsewhere);
    await other.initialize();
    const refused = await other.request("session/load", { sessionId, cwd: elsewhere, mcpServers: [] });
    expect(refused.error?.code).toBe(-32001);
    expect(refused.error?.message).toContain(`was born in ${w.project}`);
    expect(posts(w)).toBe(before);
    const loaded = await other.request("session/load", { sessionId, cwd: w.project, mcpServers: [] });
    expect(loaded.error).toBeUndefined();
    const third = await prompt(other, sessionId, "Again?");
    expect(third.result?._meta.agentport.verdict).toMatchObject({ status: "completed", session_id: sessionId });
    expect(JSON.stringify(w.standin.requests.at(-1)?.contents)).toContain("How many lines?");
    expect(await other.close()).toBe(0);
    expect(await leftAfter(w.project)).toEqual([]);
  }, 400_000);

  test("session/cancel while gemini waits on a model that hangs: the prompt answers cancelled, the run aborted, nothing of gemini left", async () => {
    const w = world([{ hang: true }]);
    const peer = serve(w);
    const sessionId = await newSession(peer, w.project);
    peer.send({ id: "hung", method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "Say hi" }] } });
    const until = performance.now() + 120_000;
    while (posts(w) === 0 && performance.now() < until) await Bun.sleep(200);
    expect(posts(w)).toBe(1);
    const started = performance.now();
    peer.send({ method: "session/cancel", params: { sessionId } });
    const answer = await peer.waitFor((m) => m.id === "hung", 60_000);
    expect(answer.result?.stopReason).toBe("cancelled");
    expect(answer.result._meta.agentport.verdict).toMatchObject({ agent: "gemini", status: "aborted", ok: false });
    expect(performance.now() - started).toBeLessThan(15_000);
    // The server and its keeper stay for the next prompt; nothing of gemini does.
    const gone = performance.now() + 5_000;
    while (agentsIn(w.project).length > 0 && performance.now() < gone) await Bun.sleep(100);
    expect(agentsIn(w.project)).toEqual([]);
    expect(await peer.close()).toBe(0);
    expect(await leftAfter(w.project)).toEqual([]);
  }, 300_000);

  test("a 401 from the model: an error answer carrying the verdict (an auth fault, exit 5), and the server goes on serving", async () => {
    const w = world([{ status: 401, body: "API key not valid." }]);
    const peer = serve(w);
    const sessionId = await newSession(peer, w.project);
    const answer = await prompt(peer, sessionId, "Say hi");
    expect(answer.result).toBeUndefined();
    expect(answer.error).toMatchObject({
      code: -32000,
      data: { agentport: { exit_code: 5, verdict: { agent: "gemini", status: "failed", env_fault: true, fault: { kind: "auth" } } } },
    });
    expect(posts(w)).toBe(1);
    expect((await peer.request("session/new", { cwd: w.project, mcpServers: [] })).result.sessionId).toBeString();
    expect(await peer.close()).toBe(0);
  }, 300_000);
});
