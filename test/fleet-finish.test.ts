// A result is written once, by the attempt that holds the lease, and a
// renewal still in flight when the result lands is not a lost lease: with a
// short lease (a renewal every ~170 ms) and many short tasks, finish and
// renewal meet often. Before the fix, a renewal answered after the finish
// said "lease lost, stopping its run" about a run already stored.
import { describe, expect, test } from "bun:test";
import { agentport } from "./helpers.ts";
import { usePostgres } from "./pg.ts";
import { agentRuns, fleet, host, lines, submit, worker } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet-finish.test.ts");

describe.skipIf(skip)("a result and the renewal in flight", () => {
  test("16 short tasks on a 1 s lease: each stored done, run once, and no attempt says its lease was lost", async () => {
    const f = await fleet([]);
    const ids = await Promise.all(Array.from({ length: 16 }, (_, i) => submit(f, [`task ${i}`])));
    const w = worker(f, { ...host(f, "a"), AGENTPORT_LEASE_MS: "1000" }, ["--concurrency", "4"]);
    const waited = await agentport(["wait", ...ids, "--timeout", "120", "--json"], { env: f.env });
    w.kill("SIGTERM");
    const [code, said] = await Promise.all([w.exited, new Response(w.stderr).text()]);
    expect(waited.stderr).toBe("");
    expect(lines(waited.stdout).map((l) => JSON.parse(l).state)).toEqual(ids.map(() => "done"));
    expect(code).toBe(0);
    expect(said.split("\n").filter((l) => /lease|refused/.test(l))).toEqual([]);
    expect(
      agentRuns(f)
        .map((r) => r.task)
        .sort(),
    ).toEqual([...ids].sort());
  }, 180_000);
});
