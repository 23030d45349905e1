// An ACP agent installed from npm: @agentclientprotocol/claude-agent-acp
// 0.101.0 (the test/peers package; Claude Code's Agent SDK behind ACP), driven
// by `agentport run --agent acp` through the compiled binary against the
// loopback Anthropic stand-in. The adapter starts its sessions in "auto",
// where nothing is asked: agentport switches the session to the mode its
// --permission-mode names, so the permission policy holds.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { peerOrSkip } from "./peers/peers.ts";
import { claudeEnv, startAnthropicStandin } from "./standins/anthropic.ts";
import { removeTempDirs, tempDir, type Script, type Standin } from "./standins/util.ts";
import { agentport, leftAfter } from "./standins/world.ts";

const ADAPTER = peerOrSkip("claude-acp");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

function world(script: Script) {
  const dir = tempDir("agentport-e2e-acp-claude-");
  const project = join(dir, "project");
  mkdirSync(project, { recursive: true });
  const standin = startAnthropicStandin(script);
  standins.push(standin);
  // Claude Code refuses its bypass flag (which the adapter always passes) as root outside a sandbox; CI runs as root.
  return { dir, project, standin, env: { ...claudeEnv(dir, standin.url), AGENTPORT_HOME: join(dir, "agentport"), IS_SANDBOX: "1" } };
}

const run = (w: ReturnType<typeof world>, extra: string[] = []) =>
  agentport(w, ["run", "--agent", "acp", "--acp-command", ADAPTER!, "--json", "--progress", "off", ...extra, "-"], {
    stdin: "Do it.",
    timeoutMs: 150_000,
  });

const bash: Script = [
  { toolCall: { name: "Bash", arguments: { command: "touch made-by-shell.txt", description: "Create a file" } } },
  { text: "Done." },
];

describe.skipIf(ADAPTER === null)("agentport run --agent acp with the npm adapter claude-agent-acp 0.101.0", () => {
  test("a text answer: the text, tokens and the cost the adapter reports; the session switched out of auto; nothing left running", async () => {
    const w = world([{ text: "Hello from the stand-in." }]);
    const { code, verdict } = await run(w);
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ agent: "acp", status: "completed", stop_reason: "end_turn", cost_source: "reported" });
    expect(verdict?.text).toContain("Hello from the stand-in.");
    expect(verdict?.tokens?.input).toBeGreaterThan(0);
    expect(verdict?.cost_micro_usd).toBeGreaterThan(0);
    expect(verdict?.summary).toMatchObject({
      agent_name: "@agentclientprotocol/claude-agent-acp",
      agent_version: "0.101.0",
      agent_mode: "default",
    });
    expect(await leftAfter(w.dir)).toEqual([]);
  }, 150_000);

  test("under --isolate (no IS_SANDBOX from us: bwrap's sandbox says so): the text, and the policy still asks and rejects", async () => {
    const w = world(bash);
    const { IS_SANDBOX: _, ...env } = w.env;
    const { code, verdict } = await agentport(
      { ...w, env },
      ["run", "--agent", "acp", "--acp-command", ADAPTER!, "--json", "--progress", "off", "--isolate", "--permission-mode", "default", "-"],
      {
        stdin: "Do it.",
        timeoutMs: 150_000,
      },
    );
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ status: "completed", isolated: true });
    expect(verdict?.text).toContain("Done.");
    expect(w.standin.log.filter((r) => r.method === "POST").length).toBeGreaterThanOrEqual(2);
    expect(verdict?.refused.length).toBe(1);
    expect(existsSync(join(w.project, "made-by-shell.txt"))).toBe(false);
  }, 150_000);

  test("Bash, no --permission-mode: asked over ACP and rejected (refused, the file not made); bypassPermissions: run", async () => {
    const rejected = world(bash);
    const r = await run(rejected);
    expect(r.code).toBe(0);
    expect(r.verdict?.refused.length).toBe(1);
    expect(r.verdict?.refused[0]).toMatchObject({ kind: "permission" });
    expect(r.verdict?.refused[0]?.subject).toContain("rejected; allow it with --permission-mode bypassPermissions");
    expect(existsSync(join(rejected.project, "made-by-shell.txt"))).toBe(false);
    const answers = readFileSync(
      join(rejected.dir, "agentport", "runs", readdirSync(join(rejected.dir, "agentport", "runs"))[0]!, "acp-answers.jsonl"),
      "utf8",
    );
    expect(answers).toContain('"decision":"reject"');

    const allowed = world(bash);
    const a = await run(allowed, ["--permission-mode", "bypassPermissions"]);
    expect(a.verdict).toMatchObject({ status: "completed", refused: [] });
    expect(existsSync(join(allowed.project, "made-by-shell.txt"))).toBe(true);
  }, 300_000);
});
