// Resume by `session/load` with the real `opencode acp` 1.18.33 (test/peers)
// against the loopback chat-completions stand-in: through `agentport resume`
// in the birth folder (the history reaches the model), refused from another
// folder by agentport's birth-folder rule though opencode itself would accept
// it (ground truth), and loaded again through `agentport acp` by an ACP client.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { peerOrSkip } from "./peers/peers.ts";
import { AcpPeer } from "./acp-client.ts";
import { startOpenAIStandin } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import { removeTempDirs, type RecordedRequest, type Standin } from "./standins/util.ts";
import { agentport, leftAfter, makeWorld } from "./standins/world.ts";

const OPENCODE = peerOrSkip("opencode");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

const said = (req: RecordedRequest): string => JSON.stringify(req.messages ?? []);
const modelCalls = (s: Standin) => s.requests.filter((r) => !isTitleRequest(r));

describe.skipIf(OPENCODE === null)("session/load with the real opencode acp 1.18.33", () => {
  test("resume in the birth folder loads the session (its history reaches the model); another folder is refused before opencode starts; agentport acp loads it too", async () => {
    const standin = startOpenAIStandin((req) =>
      isTitleRequest(req)
        ? { text: "A title" }
        : said(req).includes("What was the word")
          ? { text: "The word was BLUE." }
          : { text: "Noted: BLUE." },
    );
    standins.push(standin);
    const w = makeWorld("agentport-e2e-acp-load-", standin, opencodeEnv, {});
    const command = ["--agent", "acp", "--acp-command", `${OPENCODE} acp`];
    const first = await agentport(w, ["run", ...command, "--json", "--progress", "off", "-"], {
      stdin: "Remember the word BLUE.",
      timeoutMs: 150_000,
    });
    expect(first.verdict).toMatchObject({ status: "completed", text: "Noted: BLUE." });
    const id = first.verdict!.session_id!;

    const again = await agentport(w, ["resume", id, "--json", "--progress", "off", "-"], {
      stdin: "What was the word?",
      timeoutMs: 150_000,
    });
    expect(again.verdict).toMatchObject({ status: "completed", text: "The word was BLUE.", session_id: id });
    expect(said(modelCalls(standin).at(-1)!)).toContain("Remember the word BLUE.");

    const other = join(w.dir, "elsewhere");
    mkdirSync(other);
    const calls = modelCalls(standin).length;
    const refused = await agentport(w, ["resume", id, "--cwd", other, "--json", "--progress", "off", "-"], {
      stdin: "And now?",
      timeoutMs: 60_000,
    });
    expect(refused.code).toBe(3);
    expect(refused.verdict?.failure?.message).toContain(`was born in ${w.project}`);
    expect(modelCalls(standin).length).toBe(calls);

    // An ACP client loads the same session through agentport acp, in its birth folder.
    const peer = new AcpPeer(command, { cwd: w.project, env: w.env });
    try {
      await peer.initialize();
      expect((await peer.request("session/load", { sessionId: id, cwd: other, mcpServers: [] })).error?.code).toBe(-32001);
      expect((await peer.request("session/load", { sessionId: id, cwd: w.project, mcpServers: [] })).error).toBeUndefined();
      const answer = await peer.request(
        "session/prompt",
        { sessionId: id, prompt: [{ type: "text", text: "What was the word, once more?" }] },
        150_000,
      );
      expect(answer.result?.stopReason).toBe("end_turn");
      expect(answer.result._meta.agentport.verdict).toMatchObject({ session_id: id, text: "The word was BLUE." });
      expect(said(modelCalls(standin).at(-1)!)).toContain("Remember the word BLUE.");
      expect(await peer.close()).toBe(0);
    } finally {
      peer.kill();
    }
    expect(await leftAfter(w.dir)).toEqual([]);
  }, 400_000);
});

describe.skipIf(OPENCODE === null)("doctor's ACP probe with the real opencode acp 1.18.33", () => {
  test("initialize only: opencode named with its version and capabilities, no model request", async () => {
    const standin = startOpenAIStandin(() => ({ text: "never asked" }));
    standins.push(standin);
    const w = makeWorld("agentport-e2e-acp-doctor-", standin, opencodeEnv, {});
    const ran = await agentport(w, ["doctor", "--agent", "acp", "--acp-command", `${OPENCODE} acp`], { timeoutMs: 90_000 });
    expect(ran.code).toBe(0);
    expect(ran.stdout).toMatch(/ok +acp +\S+ acp: OpenCode 1\.18\.33, protocol 1, capabilities loadSession/);
    expect(standin.requests).toEqual([]);
    expect(await leftAfter(w.dir)).toEqual([]);
  }, 120_000);
});
