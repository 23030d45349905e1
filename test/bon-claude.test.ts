// `agentport bon --agent claude` with the real Claude Code (the devDependency)
// against the loopback Anthropic stand-in: no key, no network. The prime
// reads and hands over an envelope with no changed files; each arm is
// `claude -p --resume PRIME --fork-session --session-id ARM` in the one
// workspace, so its first request carries the prime's conversation (paid
// once), and writes answer.txt with claude's own Write tool; a real gate
// judges it. One arm writes 41: red by the gate.
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Harvest } from "../src/bon/harvest.ts";
import { BIN, ROOT } from "./helpers.ts";
import { claudeEnv, startAnthropicStandin, type RecordedRequest, type Reply, type Standin } from "./standins/anthropic.ts";
import { git, specRepo } from "./standins/spec-repo.ts";
import { removeTempDirs, spawnCollect, tempDir } from "./standins/util.ts";

const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

type Json = Record<string, any>;

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((c: Json) => c.text ?? "").join("") : "";
const fenced = (envelope: Json) => `Done.\n\`\`\`json\n${JSON.stringify(envelope)}\n\`\`\``;

/** The model: the prime reads; each arm writes its answer (42, then 41) with Write, then reports. */
function model() {
  let arms = 0;
  return (req: RecordedRequest): Reply => {
    const messages = req.messages as Json[];
    const last = messages.at(-1);
    const briefs = messages.filter((m) => m.role === "user").map((m) => textOf(m.content));
    const cwd = /Primary working directory: (\S+)/.exec(textOf(req.system))?.[1] ?? "";
    const toolResult = Array.isArray(last?.content) && last.content.some((c: Json) => c.type === "tool_result");
    if (briefs.some((b) => b.includes("now implement the spec"))) {
      if (toolResult) return { text: fenced({ status: "success", summary: "Wrote answer.txt.", changed_files: ["answer.txt"] }) };
      return { toolCall: { name: "Write", arguments: { file_path: join(cwd, "answer.txt"), content: arms++ === 0 ? "42\n" : "41\n" } } };
    }
    if (briefs.some((b) => b.includes("READING ONLY")))
      return { text: fenced({ status: "success", summary: "I will write 42 to answer.txt.", changed_files: [] }) };
    return { text: "?" };
  };
}

describe("agentport bon --agent claude with the real claude", () => {
  test("one workspace: the prime paid once, each arm a fork of it, ranked by a real gate", async () => {
    const dir = tempDir("agentport-bon-claude-");
    const standin = startAnthropicStandin(model());
    standins.push(standin);
    const repo = specRepo(dir);
    const home = join(dir, "agentport");
    const env = { ...claudeEnv(dir, standin.url), AGENTPORT_HOME: home, AGENTPORT_CLAUDE_BIN: CLAUDE };
    const args = [
      "bon",
      "specs/task.md",
      "--agent",
      "claude",
      "--arms",
      "2",
      "--permission-mode",
      "acceptEdits",
      "--gate",
      "grep -qx 42 answer.txt",
      "--json",
      "--progress",
      "off",
    ];
    const ran = await spawnCollect([BIN, ...args], { cwd: repo, env, timeoutMs: 80_000 });
    expect(ran.stderr).toContain("each a fork of the prime");
    expect(ran.code).toBe(0);
    const h = JSON.parse(ran.stdout) as Harvest;
    expect(git(repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? specs/task.md\n");
    expect(h).toMatchObject({
      agent: "claude",
      arms_from: "fork",
      prime: { ok: true, agent: "claude", summary: "I will write 42 to answer.txt.", cost_source: "reported" },
    });
    expect(h.prime!.cost_micro_usd).toBeGreaterThan(0);
    expect(h.arms.map((a) => [a.rank, a.verdict])).toEqual([
      [1, "green"],
      [2, "red"],
    ]);
    const [green, red] = h.arms;
    expect(red!.reason).toBe("gate `grep -qx 42 answer.txt` exited 1");
    expect(readFileSync(green!.patch!, "utf8")).toContain("+42");
    for (const a of h.arms) {
      expect(a).toMatchObject({ agent: "claude", cost_source: "reported", refused: [] });
      expect(a.run_session_id).not.toBe(h.prime!.run_session_id);
    }
    // Each arm's first request carries the prime's conversation: the fork, not a new session reading the spec again.
    const armFirsts = standin.requests
      .map((r) => JSON.stringify(r.messages))
      .filter((m) => m.includes("now implement the spec") && !m.includes("tool_result"));
    expect(armFirsts).toHaveLength(2);
    for (const m of armFirsts) expect(m).toContain("READING ONLY");
  }, 90_000);
});
