// `agentport bon --agent opencode` with the real opencode 1.18.33 (the peer)
// against the loopback chat-completions stand-in: no key, no network. Real
// patches are harvested and a real gate runs (./bon-opencode-fixture.ts).
// Here --serve: the prime a session of one `opencode serve`, the arms forked over HTTP.
import { describe, expect, test } from "bun:test";
import { BATCHES, batchTest, OPENCODE, stopWorldsAfterAll, world } from "./bon-opencode-fixture.ts";
import { runBon } from "./standins/bon-opencode.ts";

stopWorldsAfterAll();

describe.skipIf(OPENCODE === null)("agentport bon --agent opencode --serve with the real opencode 1.18.33", () => {
  for (const b of BATCHES) if (b.sessions === "server") batchTest(b);

  test("an opencode serve that exits before it listens: the prime fails, no arm runs, exit 5 (the environment)", async () => {
    const w = world();
    const { code, harvest, stderr } = await runBon({ ...w, env: { ...w.env, AGENTPORT_OPENCODE_BIN: "/bin/false" } }, ["--serve"]);
    expect(code).toBe(5);
    expect(harvest?.prime?.reason).toContain("opencode serve exited");
    expect(harvest?.arms.every((a) => a.verdict === "red" && a.reason.startsWith("not run"))).toBe(true);
    expect(stderr).toContain("the prime failed");
    expect(w.standin.requests.length).toBe(0);
  });
});
