// The fleet with a real agent: real Claude Code (the devDependency) against
// its loopback Anthropic stand-in, through submit → worker → results on a
// real PostgreSQL, all through the compiled binary. The worker's own
// environment holds the API key (a canary, by value only); the stand-in's
// answer repeats it, and it is stored nowhere: not in the task's stream, its
// verdict or its row.
import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { agentport, ROOT } from "./helpers.ts";
import { usePostgres } from "./pg.ts";
import { claudeEnv, startAnthropicStandin } from "./standins/anthropic.ts";
import type { Standin } from "./standins/util.ts";
import { agentRuns, fleet, host, submit, task, worker } from "./fleet-fixture.ts";

const skip = usePostgres("test/fleet-real.test.ts");
const CLAUDE = join(ROOT, "node_modules", ".bin", "claude");
const standins: Standin[] = [];
afterAll(async () => {
  for (const s of standins) await s.stop();
});

describe.skipIf(skip)("the fleet with real claude", () => {
  test("submit → worker → results: completed with tokens and cost; the key in the answer is redacted in the stored stream", async () => {
    const canary = `canary${crypto.randomUUID().replaceAll("-", "")}`;
    const standin = startAnthropicStandin([{ text: `Done. The key was ${canary}.` }]);
    standins.push(standin);
    const f = await fleet([]);
    const id = await submit(f, ["--agent", "claude", "Say the key"]);
    // The worker's box: real claude, its offline environment, its own key.
    const box = { ...host(f, "a"), ...claudeEnv(f.root, standin.url), AGENTPORT_CLAUDE_BIN: CLAUDE, ANTHROPIC_API_KEY: canary };
    const w = worker(f, box, ["--once", "--agents", "claude"]);
    const [code, out] = await Promise.all([w.exited, new Response(w.stdout).text()]);
    expect({ code, out }).toMatchObject({ code: 0 });
    expect(standin.log.find((r) => r.method === "POST")?.headers["x-api-key"]).toBe(canary);

    const done = await task(f, id);
    expect(done).toMatchObject({ state: "done", exit_code: 0, runs: 1 });
    expect(done.verdict).toMatchObject({ agent: "claude", status: "completed", ok: true, text: "Done. The key was [redacted]." });
    expect(done.verdict.tokens.input).toBeGreaterThan(0);
    expect(done.verdict.cost_micro_usd).toBeGreaterThan(0);
    expect(done.stream_stored).toBe(true);

    const stream = await agentport(["results", id, "--stream"], { env: f.env });
    expect(stream.code).toBe(0);
    expect(stream.stdout).toContain("[redacted]");
    expect(stream.stdout).not.toContain(canary);
    expect(JSON.stringify(done)).not.toContain(canary);
    expect((await agentport(["results", id, "--json"], { env: f.env })).stdout).not.toContain(canary);
    // The fake claude never ran: the real one did.
    expect(agentRuns(f)).toEqual([]);
  }, 120_000);
});
