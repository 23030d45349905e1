// Real `opencode acp` 1.18.33 (the test/peers package) driven by `agentport run
// --agent acp` through the compiled binary, against the loopback
// chat-completions stand-in (ground-truth/acp-gemini-0.61.0-opencode-1.18.33.md):
// the cost opencode reports, and its bash permission asked over ACP.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
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

/** A world whose opencode asks before bash (its default lets bash run). */
function world(replies: Reply[]): World {
  let calls = 0;
  const standin = startOpenAIStandin((req) =>
    isTitleRequest(req) ? { text: "A title" } : replies[Math.min(++calls, replies.length) - 1]!,
  );
  standins.push(standin);
  const w = makeWorld("agentport-e2e-acp-opencode-", standin, opencodeEnv, {});
  const file = join(w.env.XDG_CONFIG_HOME!, "opencode", "opencode.json");
  writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), permission: { bash: "ask" } }));
  return w;
}

const run = (w: World, extra: string[] = []) =>
  agentport(w, ["run", "--agent", "acp", "--acp-command", `${OPENCODE} acp`, "--json", "--progress", "off", ...extra, "-"], {
    stdin: "Do it.",
    timeoutMs: 150_000,
  });

describe.skipIf(OPENCODE === null)("agentport run --agent acp with the real opencode acp 1.18.33", () => {
  test("a text answer: the text, the prompt's tokens, opencode's reported cost (cost_source reported)", async () => {
    const w = world([{ text: "The answer is 4.", usage: { input: 1000, output: 10 } }]);
    const { code, verdict } = await run(w);
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ agent: "acp", status: "completed", text: "The answer is 4.", stop_reason: "end_turn" });
    expect(verdict?.summary).toMatchObject({ agent_name: "OpenCode", agent_version: "1.18.33" });
    expect(verdict?.cost_source).toBe("reported");
    expect(verdict?.cost_micro_usd).toBeGreaterThan(0);
    expect(verdict?.tokens?.output).toBeGreaterThan(0);
    expect(await leftAfter(w.dir)).toEqual([]);
  }, 150_000);

  test("bash asked over ACP: rejected by default (refused, not run); allowed by bypassPermissions (run)", async () => {
    const bash: Reply[] = [
      { toolCall: { name: "bash", arguments: { command: "touch made-by-shell.txt", description: "touch" } } },
      { text: "Done." },
    ];
    const rejected = world(bash);
    const r = await run(rejected);
    expect(r.verdict?.refused).toEqual([
      { kind: "permission", subject: "execute: rejected; allow it with --permission-mode bypassPermissions" },
    ]);
    expect(existsSync(join(rejected.project, "made-by-shell.txt"))).toBe(false);
    const allowed = world(bash);
    const a = await run(allowed, ["--permission-mode", "bypassPermissions"]);
    expect(a.verdict).toMatchObject({ status: "completed", refused: [], text: "Done." });
    expect(existsSync(join(allowed.project, "made-by-shell.txt"))).toBe(true);
  }, 300_000);
});
