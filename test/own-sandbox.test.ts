// A worker's phases share its process: each phase's --isolate is its own
// (ownSandbox), never the process's nor another phase's, across awaits.
import { expect, test } from "bun:test";
import { agentSandbox, isolateAgents, ownSandbox, type Sandbox } from "../src/io/sandbox.ts";

const box = (network: Sandbox["network"]): Sandbox => ({ network, writable: [`/w/${network}`], readable: [] });

test("two phases at once each see the sandbox they set, the process its own; a phase that sets none has none", async () => {
  isolateAgents(null);
  const seen: Record<string, (Sandbox | null)[]> = { a: [], b: [], c: [] };
  const phase = (name: string, sandbox: Sandbox | null, delays: number[]) =>
    ownSandbox(async () => {
      if (sandbox !== null) isolateAgents(sandbox);
      for (const ms of delays) {
        await Bun.sleep(ms);
        seen[name]!.push(agentSandbox());
      }
    });
  await Promise.all([phase("a", box("none"), [5, 1, 5]), phase("b", box("host"), [1, 5, 1]), phase("c", null, [3, 3])]);
  expect(seen.a).toEqual([box("none"), box("none"), box("none")]);
  expect(seen.b).toEqual([box("host"), box("host"), box("host")]);
  expect(seen.c).toEqual([null, null]);
  expect(agentSandbox()).toBeNull();
  // Outside any phase (run, resume, bon): the process's, as before.
  isolateAgents(box("host"));
  expect(agentSandbox()).toEqual(box("host"));
  isolateAgents(null);
});
