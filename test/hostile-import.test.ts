// A hostile ledger export (issue 12, item 10), through the compiled binary:
// control sequences, bidi overrides and zero-width characters in the strings
// of an imported session never reach the terminal; ids out of bounds, a huge
// field and a huge line are refused (one line, exit 2, nothing imported); and
// token and cost sums far beyond 2^63 do not break `sessions`.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { agentport, tempDir } from "./helpers.ts";
import { exportedPhase, exportedSession } from "./exported-row.ts";

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

function box() {
  const root = tempDir("agentport-hostile-");
  made.push(root);
  const env = { AGENTPORT_HOME: join(root, "state"), AGENTPORT_CONFIG: "", HOME: root };
  const importText = async (text: string) => {
    const file = join(root, `export-${crypto.randomUUID()}.ndjson`);
    writeFileSync(file, text);
    return agentport(["import", file], { cwd: root, env });
  };
  return { root, env, importText };
}

const ESC = "\u001b";
// A title change, a screen clear, a hyperlink, a C1 CSI, a bell, a bidi override and zero-width characters.
const HOSTILE = `${ESC}]0;owned${ESC}\\${ESC}[2J${ESC}]8;;https://evil.example${ESC}\\link${ESC}]8;;${ESC}\\\u009b31m\u0007\u202egnp.exe\u200b\u2066x\u2069\ufeff`;

function session(id: string, extra: Record<string, unknown> = {}, phases: Record<string, unknown>[] = []) {
  return exportedSession({ id, cwd: `/tmp/project${HOSTILE}`, model: `claude-x${HOSTILE}`, agent_session_id: id, phases, ...extra });
}
function phase(seq: number, tokens: number, extra: Record<string, unknown> = {}) {
  const counted = { tokens_in: tokens, tokens_out: tokens, cost_micro_usd: tokens };
  return exportedPhase({ seq, status: "failed", ok: false, ...counted, failure: `boom${HOSTILE}`, ...extra });
}
const ndjson = (...records: unknown[]) => `${records.map((r) => JSON.stringify(r)).join("\n")}\n`;

/** What a terminal would act on: escape, C0/C1 controls (but newline), bidi controls, zero-width characters. */
const DRIVES_TERMINAL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

describe("ledger data never drives the terminal", () => {
  test("control sequences, bidi overrides and zero-width characters in an imported session are removed from sessions and show, escaped in --json", async () => {
    const b = box();
    const imported = await b.importText(ndjson(session("hostile-1", {}, [phase(1, 10)])));
    expect(imported.code).toBe(0);
    const list = await agentport(["sessions"], { cwd: b.root, env: b.env });
    const show = await agentport(["show", "hostile-1"], { cwd: b.root, env: b.env });
    const json = await agentport(["sessions", "--json"], { cwd: b.root, env: b.env });
    const showJson = await agentport(["show", "hostile-1", "--json"], { cwd: b.root, env: b.env });
    for (const ran of [list, show, json, showJson]) {
      expect(ran.code).toBe(0);
      expect(ran.stdout + ran.stderr).not.toMatch(DRIVES_TERMINAL);
    }
    // The data is still there: printable in the listing, whole (escaped) in the export.
    expect(list.stdout).toContain("claude-x");
    expect(show.stdout).toContain("gnp.exe");
    expect(JSON.parse(showJson.stdout).cwd).toContain(`${ESC}[2J`);
    expect(JSON.parse(showJson.stdout).model).toBe(`claude-x${HOSTILE}`);
  });

  test.each([
    ["an id with ..", session("../../etc"), "id: an id is 1 to 200 characters"],
    ["an id with a slash", session("a/b"), "id: an id is 1 to 200 characters"],
    ["an id of 201 characters", session("a".repeat(201)), "id: an id is 1 to 200 characters"],
    ["an id with an escape", session(`id${ESC}[2J`), "id: an id is 1 to 200 characters"],
    ["a parent id with ..", session("ok-id", { parent_id: "x..y" }), "parent_id: an id is 1 to 200 characters"],
    ["a run id with a space", session("ok-id", {}, [phase(1, 1, { run_id: "run 1" })]), "phases[0].run_id: an id"],
    ["a field of 100,000 characters", session("ok-id", { model: "m".repeat(100_000) }), "model: 100000 characters, at most 65536"],
  ])("%s is refused: one line, exit 2, nothing imported", async (_name, record, message) => {
    const b = box();
    const ran = await b.importText(ndjson(session("first-ok"), record));
    expect(ran.code).toBe(2);
    const lines = ran.stderr.split("\n").filter((l) => l.trim() !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`line 2: ${message}`);
    expect(lines[0]).not.toMatch(DRIVES_TERMINAL);
    expect(existsSync(join(b.root, "state"))).toBe(false);
  });

  test("a 100 MB field is refused while it is read, nothing imported", async () => {
    const b = box();
    const ran = await b.importText(`${JSON.stringify(session("big", { model: "x".repeat(100 * 1024 * 1024) }))}\n`);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain("line 1: more than 16777216 bytes; an exported session is at most 16777216 bytes");
    expect(existsSync(join(b.root, "state"))).toBe(false);
  });

  test("1,100 phases of 2^53 - 1 tokens and micro-dollars: sums beyond 2^63 do not break sessions or show", async () => {
    const b = box();
    const big = Number.MAX_SAFE_INTEGER;
    const phases = Array.from({ length: 1100 }, (_, i) => phase(i + 1, big));
    const imported = await b.importText(ndjson(session("huge-sums", {}, phases), session("after-it")));
    expect(imported.code).toBe(0);
    const list = await agentport(["sessions"], { cwd: b.root, env: b.env });
    expect(list.code).toBe(0);
    expect(list.stdout).toContain("after-it");
    expect(list.stdout).toContain("huge-sums");
    const json = await agentport(["sessions", "--json"], { cwd: b.root, env: b.env });
    expect(json.code).toBe(0);
    const row = json.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((r) => r.id === "huge-sums");
    expect(row.totals.tokens.input).toBeGreaterThan(2 ** 63);
    const show = await agentport(["show", "huge-sums"], { cwd: b.root, env: b.env });
    expect(show.code).toBe(0);
  });
});
