// `agentport acp --agent acp --acp-command 'opencode acp'` with the real
// opencode 1.18.33 (test/peers) on the loopback chat-completions stand-in,
// driven by a small ACP client: opencode's bash permission request reaches
// the client through agentport, and the client's answer decides.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { peerOrSkip } from "./peers/peers.ts";
import { AcpPeer } from "./acp-client.ts";
import { startOpenAIStandin, type Reply } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import { removeTempDirs, type Standin } from "./standins/util.ts";
import { leftAfter, makeWorld } from "./standins/world.ts";

const OPENCODE = peerOrSkip("opencode");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

describe.skipIf(OPENCODE === null)("agentport acp fronting the real opencode acp 1.18.33", () => {
  test("opencode's bash request is forwarded to the ACP client: rejected, then allowed, each as the client said", async () => {
    const bash: Reply[] = [
      { toolCall: { name: "bash", arguments: { command: "touch made-by-shell.txt", description: "touch" } } },
      { text: "Done." },
    ];
    // A turn's first model call asks for bash; the call after the tool's answer (or its rejection) ends the turn.
    const standin = startOpenAIStandin((req) =>
      isTitleRequest(req) ? { text: "A title" } : req.messages?.at(-1)?.role === "user" ? bash[0]! : bash[1]!,
    );
    standins.push(standin);
    const w = makeWorld("agentport-e2e-acp-server-", standin, opencodeEnv, {});
    const config = join(w.env.XDG_CONFIG_HOME!, "opencode", "opencode.json");
    writeFileSync(config, JSON.stringify({ ...JSON.parse(readFileSync(config, "utf8")), permission: { bash: "ask" } }));
    const peer = new AcpPeer(["--agent", "acp", "--acp-command", `${OPENCODE} acp`], { cwd: w.project, env: w.env });
    try {
      await peer.initialize();
      const made = await peer.request("session/new", { cwd: w.project, mcpServers: [] }, 120_000);
      const sessionId = made.result.sessionId as string;
      const turn = async (choose: "reject_once" | "allow_once") => {
        const before = peer.received.length;
        const id = `turn-${choose}`;
        peer.send({ id, method: "session/prompt", params: { sessionId, prompt: [{ type: "text", text: "Touch the file." }] } });
        const asked = await peer.waitFor((m) => peer.received.indexOf(m) >= before && m.method === "session/request_permission", 150_000);
        expect(asked.params?.toolCall?.kind).toBe("execute");
        const option = asked.params!.options.find((o: { kind: string }) => o.kind === choose);
        peer.send({ id: asked.id, result: { outcome: { outcome: "selected", optionId: option.optionId } } });
        return (await peer.waitFor((m) => m.id === id, 150_000)).result;
      };
      const rejected = await turn("reject_once");
      expect(rejected._meta.agentport.verdict.refused).toEqual([{ kind: "permission", subject: "execute: rejected by the ACP client" }]);
      expect(existsSync(join(w.project, "made-by-shell.txt"))).toBe(false);
      const allowed = await turn("allow_once");
      expect(allowed.stopReason).toBe("end_turn");
      expect(allowed._meta.agentport.verdict).toMatchObject({ status: "completed", refused: [], cost_source: "reported" });
      expect(existsSync(join(w.project, "made-by-shell.txt"))).toBe(true);
      expect(await peer.close()).toBe(0);
    } finally {
      peer.kill();
    }
    expect(await leftAfter(w.dir)).toEqual([]);
  }, 400_000);
});
