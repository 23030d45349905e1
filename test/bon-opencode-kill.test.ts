// `agentport bon --agent opencode` with the real opencode 1.18.33 (the peer)
// against the loopback chat-completions stand-in: no key, no network. Real
// patches are harvested and a real gate runs (./bon-opencode-fixture.ts).
// Here batches stopped mid-arm: kill -9 of agentport, and Ctrl-C.
import { describe, expect, test } from "bun:test";
import type { Harvest } from "../src/bon/harvest.ts";
import { hangingArms, OPENCODE, stopWorldsAfterAll } from "./bon-opencode-fixture.ts";
import { git } from "./standins/spec-repo.ts";
import { leftAfter } from "./standins/world.ts";

stopWorldsAfterAll();

describe.skipIf(OPENCODE === null)("agentport bon --agent opencode with the real opencode 1.18.33, stopped mid-arm", () => {
  for (const flags of [["--parallel"], ["--serve", "--parallel"]]) {
    test(`kill -9 of agentport mid-arm (${flags.join(" ")}): no opencode, no server, no tool of an arm is left running`, async () => {
      const { w, proc } = await hangingArms(flags);
      proc.kill("SIGKILL");
      await proc.exited;
      // The keeper took opencode (the one-shot processes or the server) and the tools it started.
      expect(await leftAfter(w.dir, 10_000)).toEqual([]);
      expect(git(w.repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? specs/task.md\n");
    }, 300_000);
  }

  test("Ctrl-C mid-arm on one server: every arm's session aborted over HTTP, harvested, exit 130; nothing left running", async () => {
    const { w, proc } = await hangingArms(["--serve", "--parallel"]);
    proc.kill("SIGINT");
    const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(130);
    const h = JSON.parse(out) as Harvest;
    expect(h).toMatchObject({ interrupted: true, winner: null, sessions: "server" });
    for (const a of h.arms) expect(a).toMatchObject({ verdict: "red", status: "aborted" });
    expect(await leftAfter(w.dir, 10_000)).toEqual([]);
    expect(git(w.repo, "status", "--porcelain", "--untracked-files=all")).toBe("?? specs/task.md\n");
  }, 300_000);
});
