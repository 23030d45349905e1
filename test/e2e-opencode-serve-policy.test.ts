// --permissions FILE answering the real opencode 1.18.33's asks over --serve
// (test/peers), against the loopback chat-completions stand-in: a rule that
// allows only edits under src/** rejects a bash ask and a write outside the
// folder (asked as external_directory), and allows the write inside.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { peerOrSkip } from "./peers/peers.ts";
import { startOpenAIStandin, type Reply } from "./standins/openai.ts";
import { isTitleRequest, opencodeEnv } from "./standins/opencode.ts";
import { removeTempDirs, type Standin } from "./standins/util.ts";
import { agentport, leftAfter, makeWorld } from "./standins/world.ts";

const OPENCODE = peerOrSkip("opencode");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
  removeTempDirs();
});

describe.skipIf(OPENCODE === null)("--permissions FILE with the real opencode 1.18.33 --serve", () => {
  test("allow only edit under src/**: the bash ask and the write outside are rejected (nothing written), the write inside is allowed (written)", async () => {
    let calls = 0;
    const seen: Record<string, any>[] = [];
    let replies: Reply[] = [];
    const standin = startOpenAIStandin((req) => {
      if (isTitleRequest(req)) return { text: "A title" };
      seen.push(req);
      return replies[Math.min(++calls, replies.length) - 1]!;
    });
    standins.push(standin);
    const w = makeWorld("agentport-e2e-opencode-policy-", standin, opencodeEnv, {
      AGENTPORT_OPENCODE_BIN: OPENCODE ?? "",
      OPENCODE_PERMISSION: JSON.stringify({ bash: "ask", edit: "ask" }),
    });
    mkdirSync(join(w.project, "src"));
    const outside = join(w.dir, "outside.txt");
    replies = [
      { toolCall: { name: "bash", arguments: { command: "touch made-by-shell.txt", description: "make" } } },
      { toolCall: { name: "write", arguments: { filePath: outside, content: "out\n" } } },
      { toolCall: { name: "write", arguments: { filePath: join(w.project, "src", "inside.txt"), content: "in\n" } } },
      { text: "Done." },
    ];
    const policy = join(w.dir, "policy.json");
    writeFileSync(policy, JSON.stringify({ rules: [{ decision: "allow", kind: "edit", path: "src/**" }] }));
    const { code, verdict, stderr } = await agentport(
      w,
      ["run", "--agent", "opencode", "--serve", "--permissions", policy, "--json", "--progress", "lines", "-"],
      { stdin: "Make the files", timeoutMs: 150_000 },
    );
    if (code !== 0) console.error(stderr);
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ status: "completed", ok: true, text: "Done." });
    expect(verdict?.refused).toEqual([
      { kind: "permission", subject: "bash: touch made-by-shell.txt (rejected)" },
      { kind: "permission", subject: `external_directory: ${w.dir}/* (rejected)` },
    ]);
    expect(existsSync(join(w.project, "made-by-shell.txt"))).toBe(false);
    expect(existsSync(outside)).toBe(false);
    expect(existsSync(join(w.project, "src", "inside.txt"))).toBe(true);
    // Three asks reached the policy; the one allowed was the edit inside. opencode names an edit's patterns from
    // its worktree ("/" outside git: "tmp/…/project/src/inside.txt"), so the policy reads metadata.filepath.
    expect(verdict?.summary).toMatchObject({ permissions_asked: 3, permissions_allowed: 1 });
    // The model was told why, naming the file.
    expect(JSON.stringify(seen[1]?.messages ?? [])).toContain(`no rule of ${policy} allows it`);
    expect(await leftAfter(w.project)).toEqual([]);
  }, 200_000);
});
