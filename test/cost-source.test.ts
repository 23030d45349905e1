// Cost with its provenance (issue #27 item 4), through the compiled binary:
// cost_source in every verdict and phase row, the shipped price table and
// agentport.json `prices` over it, `agentport prices`, --max-cost refused when
// the cost would be unknown, a budget stopped when its cost stops arriving,
// and claude's two cost figures checked against each other.
import { afterAll, describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema, type Verdict } from "../src/core/verdict.ts";
import { agentport, fakeProject, type FakeProject } from "./helpers.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function world(): FakeProject {
  const w = fakeProject("agentport-cost-", { GEMINI_CLI_TRUST_WORKSPACE: "true" });
  made.push(w.root);
  return w;
}

async function run(w: FakeProject, agent: string, scenario: string | object, extra: string[] = []) {
  const s = typeof scenario === "string" ? scenario : JSON.stringify(scenario);
  const ran = await agentport(["run", "--agent", agent, "--json", "--progress", "off", ...extra, "go"], {
    cwd: w.proj,
    env: { ...w.env, AGENTPORT_FAKE_SCENARIO: s },
  });
  const verdict: Verdict | null = ran.stdout.trim().startsWith("{") ? VerdictSchema.parse(JSON.parse(ran.stdout)) : null;
  return { ...ran, verdict };
}

async function phases(w: FakeProject) {
  const listed = await agentport(["sessions", "--json"], { cwd: w.proj, env: w.env });
  return listed.stdout
    .split("\n")
    .filter((l) => l.trim())
    .flatMap((l) => JSON.parse(l).phases as Record<string, unknown>[]);
}

// The fake codex's text run: 1000 input (200 of them cached reads), 7 output.
const CODEX_TOKENS = { input: 1000, output: 7, cache_read: 200, cache_write: 0 };

describe("cost_source", () => {
  test("claude reports its cost: reported, in the verdict and the phase row", async () => {
    const w = world();
    const { verdict } = await run(w, "claude", "text");
    expect(verdict).toMatchObject({ cost_source: "reported", cost_micro_usd: 12300 });
    expect((await phases(w))[0]).toMatchObject({ cost_source: "reported" });
  });

  test("codex without a model: no price, cost null (never 0), unknown", async () => {
    const w = world();
    const { verdict } = await run(w, "codex", "text");
    expect(verdict).toMatchObject({ cost_source: "unknown", cost_micro_usd: null, tokens: CODEX_TOKENS });
    expect((await phases(w))[0]).toMatchObject({ cost_source: "unknown", cost_micro_usd: null });
  });

  test("codex with gpt-5: derived at the shipped price (1.25 in, 10 out, 0.125 cache read per Mtok)", async () => {
    const { verdict } = await run(world(), "codex", "text", ["--model", "gpt-5"]);
    expect(verdict).toMatchObject({ cost_source: "derived", cost_micro_usd: 1000 * 1.25 + 7 * 10 + 200 * 0.125 });
  });

  test("agentport.json prices override the shipped table", async () => {
    const w = world();
    const config = join(w.root, "agentport.json");
    writeFileSync(config, JSON.stringify({ prices: { "gpt-5": { input: 2, output: 20 } } }));
    const { verdict } = await run(w, "codex", "text", ["--config", config, "--model", "gpt-5"]);
    expect(verdict).toMatchObject({ cost_source: "derived", cost_micro_usd: 1000 * 2 + 7 * 20 + 200 * 2 });
    const shown = await agentport(["prices", "gpt-5", "--json", "--config", config], { cwd: w.proj, env: w.env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ model: "gpt-5", input: 2, output: 20, from: "config" });
  });
});

describe("agentport prices", () => {
  test("a model: its price, the table's source and date", async () => {
    const w = world();
    const { code, stdout } = await agentport(["prices", "gemini-2.5-pro", "--json"], { cwd: w.proj, env: w.env });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({
      model: "gemini-2.5-pro",
      input: 1.25,
      output: 10,
      from: "table",
      source: expect.stringContaining("@mariozechner/pi-ai"),
      date: expect.stringMatching(/^\d{4}-\d\d-\d\d$/),
    });
  });

  test("an unknown model: one line naming the fix, exit 2", async () => {
    const w = world();
    const { code, stderr } = await agentport(["prices", "no-such-model"], { cwd: w.proj, env: w.env });
    expect(code).toBe(2);
    expect(stderr).toContain('"prices" in agentport.json');
  });
});

describe("budgets never go silently inert", () => {
  test("--max-cost on codex with no known price is refused before the start (exit 2), nothing written", async () => {
    const w = world();
    const { code, stderr, verdict } = await run(w, "codex", "text", ["--max-cost", "0.5", "--model", "no-such-model"]);
    expect(code).toBe(2);
    expect(stderr).toContain("--max-tokens");
    expect(stderr).toContain("`prices`");
    expect(verdict?.failure?.kind).toBe("usage");
    expect(await phases(w)).toEqual([]);
  });

  test("--max-cost on gemini with a priced model runs", async () => {
    const { code, verdict } = await run(world(), "gemini", "text", ["--max-cost", "0.5", "--model", "gemini-2.5-pro"]);
    expect(code).toBe(0);
    expect(verdict?.cost_source).toBe("derived");
  });

  test("pi: tokens arrive without their cost mid-run (a moved usage.cost): over_budget with the reason", async () => {
    const steps = [
      { text: "First." },
      { tool: { name: "read", args: { path: "a.txt" }, result: "a" }, usage: { noCost: true } },
      { sleep: 20_000 },
      { text: "Too late." },
    ];
    const { code, verdict } = await run(world(), "pi", { steps }, ["--max-cost", "5"]);
    expect(code).toBe(4);
    expect(verdict).toMatchObject({ status: "over_budget", failure: { kind: "stopped", cause: "cost" } });
    expect(verdict?.failure?.message).toContain("no usage.cost");
  });

  test("the same run without --max-cost completes, its cost unknown", async () => {
    const steps = [
      { text: "First." },
      { tool: { name: "read", args: { path: "a.txt" }, result: "a" }, usage: { noCost: true } },
      { text: "Done." },
    ];
    const { code, verdict } = await run(world(), "pi", { steps });
    expect(code).toBe(0);
    expect(verdict).toMatchObject({ cost_micro_usd: null, cost_source: "unknown" });
  });
});

describe("claude: total_cost_usd against modelUsage costUSD", () => {
  const result = (total: number, perModel: number) =>
    JSON.stringify({
      type: "result",
      subtype: "success",
      is_error: false,
      result: "ok",
      session_id: "s",
      total_cost_usd: total,
      usage: { input_tokens: 10, output_tokens: 2 },
      modelUsage: { "claude-x": { inputTokens: 10, outputTokens: 2, costUSD: perModel } },
    });

  test("they agree: no flag", async () => {
    const { verdict } = await run(world(), "claude", { steps: [{ text: "ok" }, { raw: result(0.05, 0.05) }] });
    expect(verdict?.summary.cost_mismatch).toBeUndefined();
  });

  test("they differ: summary.cost_mismatch says both", async () => {
    const { verdict } = await run(world(), "claude", { steps: [{ text: "ok" }, { raw: result(0.05, 0.08) }] });
    expect(verdict?.summary.cost_mismatch).toBe("total_cost_usd $0.050000 but modelUsage costUSD sums to $0.080000");
  });
});
