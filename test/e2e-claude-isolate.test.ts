// Real Claude Code under `run --isolate` (real bwrap), against the loopback
// Anthropic stand-in: with no --permission-mode it runs bypassPermissions
// (headless, a prompt would only refuse), so its Write into the folder
// lands; the sandbox, not a prompt, stops its Write to $HOME.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { BIN, ROOT } from "./helpers.ts";
import { bwrapWorks } from "./isolation.ts";
import { claudeEnv, startAnthropicStandin } from "./standins/anthropic.ts";
import type { Standin } from "./standins/util.ts";
import { removeTempDirs, spawnCollect, tempDir } from "./standins/util.ts";

const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

describe.if(bwrapWorks())("agentport run --agent claude --isolate with the real claude", () => {
  test("bypassPermissions inside: the write in the folder lands, the one to $HOME fails, the verdict says isolated", async () => {
    const dir = tempDir("agentport-e2e-claude-isolate-");
    const project = join(dir, "project");
    mkdirSync(project, { recursive: true });
    const env = claudeEnv(dir, "http://127.0.0.1:1");
    const outside = join(env.HOME!, "escape.txt");
    const standin = startAnthropicStandin([
      { toolCall: { name: "Write", arguments: { file_path: join(project, "inside.txt"), content: "in\n" } } },
      { toolCall: { name: "Write", arguments: { file_path: outside, content: "out\n" } } },
      { text: "Tried both." },
    ]);
    standins.push(standin);
    const ran = await spawnCollect([BIN, "run", "--agent", "claude", "--isolate", "--json", "--progress", "off", "--verbose", "-"], {
      cwd: project,
      env: { ...claudeEnv(dir, standin.url), AGENTPORT_HOME: join(dir, "agentport"), AGENTPORT_CLAUDE_BIN: CLAUDE },
      stdin: "Write two files.",
      timeoutMs: 90_000,
    });
    const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
    expect(verdict).toMatchObject({ status: "completed", isolated: true, text: "Tried both.", refused: [] });
    expect(ran.stderr).toContain("--permission-mode=bypassPermissions");
    expect(readFileSync(join(project, "inside.txt"), "utf8")).toBe("in\n");
    expect(existsSync(outside)).toBe(false);
    // It did try: both writes, then the answer (three model calls).
    expect(standin.log.filter((r) => r.method === "POST").length).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
