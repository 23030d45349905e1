// `agentport acp` driven by a real third-party ACP client from npm: acpx 0.19.1
// (the test/peers package), through the compiled binary. acpx starts
// `agentport acp` as its agent (`--agent CMD`), opens a session in its cwd and
// prompts it; agentport runs the prompt as a supervised, ledger-declared phase
// of the agent behind it, and the fronted agent's permission requests reach
// acpx and are answered by its policy (--deny-all, --approve-all).
import { beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { BIN, tempDir } from "./helpers.ts";
import { peerOrSkip } from "./peers/peers.ts";
import { spawnCollect } from "./standins/util.ts";

const ACPX = peerOrSkip("acpx");
let dir: string;
beforeAll(() => {
  dir = tempDir("agentport-acpx-");
  for (const fake of ["fake-claude", "fake-acp"]) symlinkSync(BIN, join(dir, fake));
});

/** acpx's one-shot `exec` against `agentport acp ARGS`, in a folder of its own; its JSON-RPC log parsed. */
async function acpx(agentportArgs: string, acpxArgs: string[], env: Record<string, string> = {}) {
  const cwd = join(tempDir("agentport-acpx-w-"), "project");
  mkdirSync(cwd, { recursive: true });
  const home = join(cwd, "..", "home");
  mkdirSync(home, { recursive: true });
  const ran = await spawnCollect([ACPX!, "--agent", `${BIN} acp ${agentportArgs}`, "--format", "json", ...acpxArgs, "exec", "Do it."], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: home, AGENTPORT_HOME: join(cwd, "..", "agentport"), ...env },
    timeoutMs: 60_000,
  });
  const messages = ran.stdout
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, any>);
  const answer = messages.find((m) => m.id !== undefined && m.result?.stopReason !== undefined);
  return {
    ...ran,
    cwd,
    messages,
    verdict: answer?.result?._meta?.agentport?.verdict ?? null,
    stopReason: answer?.result?.stopReason ?? null,
  };
}

describe.skipIf(ACPX === null)("agentport acp driven by acpx 0.19.1", () => {
  test("a prompt with the fake claude behind it: the text as updates, end_turn, the verdict in _meta, the session in the ledger", async () => {
    const r = await acpx(`--claude-bin ${join(dir, "fake-claude")}`, ["--approve-all"]);
    expect(r.code).toBe(0);
    expect(
      r.messages
        .map((m) => m.method)
        .filter(Boolean)
        .slice(0, 3),
    ).toEqual(["initialize", "session/new", "session/prompt"]);
    const text = r.messages
      .filter((m) => m.params?.update?.sessionUpdate === "agent_message_chunk")
      .map((m) => m.params.update.content.text)
      .join("");
    expect(text).toBe("Hello from the fake claude.");
    expect(r.stopReason).toBe("end_turn");
    expect(r.verdict).toMatchObject({ agent: "claude", status: "completed", ok: true, tokens: { input: 3000, output: 42 } });
    const shown = await spawnCollect([BIN, "show", r.verdict.session_id, "--json"], {
      cwd: r.cwd,
      env: { AGENTPORT_HOME: join(r.cwd, "..", "agentport") },
      timeoutMs: 30_000,
    });
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: r.verdict.session_id, agent: "claude", cwd: r.cwd });
  }, 90_000);

  test("an ACP agent behind agentport asks a permission: forwarded to acpx, denied by --deny-all (refused, not made), allowed by --approve-all (made)", async () => {
    const behind = `--agent acp --acp-command ${join(dir, "fake-acp")}`;
    const denied = await acpx(behind, ["--deny-all"], { AGENTPORT_FAKE_SCENARIO: "permission" });
    expect(denied.messages.some((m) => m.method === "session/request_permission")).toBe(true);
    expect(existsSync(join(denied.cwd, "made-by-fake.txt"))).toBe(false);
    expect(denied.verdict?.refused).toEqual([{ kind: "permission", subject: "edit made-by-fake.txt: rejected by the ACP client" }]);
    const allowed = await acpx(behind, ["--approve-all"], { AGENTPORT_FAKE_SCENARIO: "permission" });
    expect(allowed.code).toBe(0);
    expect(existsSync(join(allowed.cwd, "made-by-fake.txt"))).toBe(true);
    expect(allowed.verdict).toMatchObject({ status: "completed", refused: [] });
  }, 120_000);
});
