// `agentport bon --agent opencode` with the real opencode 1.18.33 (the peer)
// against the loopback chat-completions stand-in: no key, no network. Real
// patches are harvested and a real gate runs (./bon-opencode-fixture.ts).
// Here a process per session: in the prime's folder a `run -s PRIME --fork`,
// in a workspace of their own an imported copy. With --serve: ./bon-opencode-serve.test.ts;
// interrupted batches: ./bon-opencode-kill.test.ts.
import { describe, expect, test } from "bun:test";
import { BIN } from "./helpers.ts";
import { BATCHES, batchTest, OPENCODE, stopWorldsAfterAll, world } from "./bon-opencode-fixture.ts";
import { spawnCollect } from "./standins/util.ts";

stopWorldsAfterAll();

describe.skipIf(OPENCODE === null)("agentport bon --agent opencode with the real opencode 1.18.33: one-shot sessions", () => {
  for (const b of BATCHES) if (b.sessions === "one-shot") batchTest(b);

  test("--serve is opencode's: with pi it is a usage error (exit 2), nothing run", async () => {
    const w = world();
    const ran = await spawnCollect([BIN, "bon", "specs/task.md", "--serve", "--progress", "off"], {
      cwd: w.repo,
      env: w.env,
      timeoutMs: 20_000,
    });
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("only opencode has a serve mode");
    expect(w.standin.requests.length).toBe(0);
  });
});
