// Totals that never hide spend: what is known is summed, and a total with a
// phase that reported no cost or tokens is marked partial ($0.0002+, partial: true).
import { afterAll, describe, expect, test } from "bun:test";
import { realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { money, totalsOf, type PhaseFigures } from "../src/core/totals.ts";
import { agentport, tempDir } from "./helpers.ts";
import { exportedSession } from "./exported-row.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

const phase = (cost: number | null, tokens: number | null, ended = true): PhaseFigures => ({
  ended_at: ended ? "2026-12-01T00:00:01Z" : null,
  status: ended ? "completed" : null,
  tokens_in: tokens,
  tokens_out: tokens === null ? null : tokens + 1,
  tokens_cache_read: tokens === null ? null : 0,
  tokens_cache_write: tokens === null ? null : 0,
  cost_micro_usd: cost,
  seconds: 1,
});

describe("totalsOf", () => {
  test.each<[string, PhaseFigures[], number | null, boolean, string]>([
    ["every phase known", [phase(100, 10), phase(100, 10)], 200, false, "$0.0002"],
    ["one phase without a cost: the known sum, partial", [phase(200, 10), phase(null, null)], 200, true, "$0.0002+"],
    ["no phase knows its cost", [phase(null, null)], null, true, "-"],
    ["a phase still running does not count", [phase(300, 10), phase(null, null, false)], 300, false, "$0.0003"],
    ["no phases", [], null, false, "-"],
  ])("%s", (_, phases, cost, partial, shown) => {
    const totals = totalsOf(phases);
    expect(totals.cost_micro_usd).toBe(cost);
    expect(totals.partial).toBe(partial);
    expect(money(totals.cost_micro_usd, totals.partial)).toBe(shown);
  });
});

describe("show and sessions", () => {
  test("a session with one phase lacking its cost: $0.0002+ on the terminal, partial: true in JSON", async () => {
    const root = realpathSync(tempDir("agentport-totals-"));
    made.push(root);
    const env = { AGENTPORT_HOME: join(root, "state"), AGENTPORT_CONFIG: "" };
    const at = "2026-12-01T10:00:00.000Z";
    const row = (seq: number, cost: number | null, tokens: number | null) => ({
      seq,
      run_id: null,
      name: null,
      kind: "run",
      started_at: at,
      ended_at: at,
      status: "completed",
      ok: true,
      tokens_in: tokens,
      tokens_out: tokens,
      tokens_cache_read: tokens === null ? null : 0,
      tokens_cache_write: tokens === null ? null : 0,
      cost_micro_usd: cost,
      seconds: 1,
      stop_reason: null,
      failure: null,
      details: null,
    });
    const id = "0193a1b2-0000-7000-8000-000000000001";
    const session = exportedSession({
      id,
      cwd: root,
      agent_session_id: id,
      declared_at: at,
      phases: [row(1, 200, 30), row(2, null, null)],
    });
    const file = join(root, "box.ndjson");
    writeFileSync(file, `${JSON.stringify(session)}\n`);
    expect((await agentport(["import", file], { env })).code).toBe(0);

    const shown = await agentport(["show", id, "--json"], { env });
    expect(JSON.parse(shown.stdout).totals).toMatchObject({ cost_micro_usd: 200, tokens: { input: 30 }, partial: true, phase_count: 2 });
    expect((await agentport(["show", id], { env })).stdout).toContain("total     $0.0002+ · 30/30+ tokens in/out · 2 phase(s) (partial");
    const listed = await agentport(["sessions"], { env });
    expect(listed.stdout).toContain("≥$0.0002");
    const exported = JSON.parse((await agentport(["sessions", "--json"], { env })).stdout.trim());
    expect(exported.totals).toMatchObject({ cost_micro_usd: 200, partial: true });
  });
});
