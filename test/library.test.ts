// The library's replay is the binary's: for a captured stream of each agent,
// `replay` (src/lib) and `agentport replay --json` give the same verdict, and
// `reduce` fed byte by byte gives it too. (test/package.test.ts imports the
// library from the packed tarball under Node and Bun.)
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { reduce, replay, schemas, type AgentName, type ProgressEvent } from "../src/lib/index.ts";
import { agentport, ROOT } from "./helpers.ts";

const CASES: [AgentName, string][] = [
  ["claude", "claude/b-tools.tools.jsonl"],
  ["pi", "pi/b1-json-tool-read.jsonl"],
  ["codex", "codex/a-plain.known-model.jsonl"],
  ["gemini", "gemini/a-plain.auto.jsonl"],
  ["opencode", "opencode/a-plain.plain.jsonl"],
  ["opencode", "opencode-serve/basic.events.jsonl"],
];

describe.each(CASES)("%s %s", (agent, fixture) => {
  const file = join(ROOT, "test", "fixtures", fixture);

  test("replay gives the binary's verdict; reduce, a byte at a time, the same", async () => {
    const events: ProgressEvent[] = [];
    const verdict = await replay(readFileSync(file), agent, { onProgress: (e) => events.push(e) });
    const binary = await agentport(["replay", "--agent", agent, "--json", file]);
    // The session id of a stream that names none is made up per replay.
    const { session_id: _, ...expected } = JSON.parse(binary.stdout);
    const { session_id: __, ...got } = verdict;
    expect(got).toEqual(expected);
    expect(verdict.schema_version).toBe(1);
    expect(events.length).toBeGreaterThan(0);

    const bytes = readFileSync(file);
    const slow = reduce(agent);
    for (let i = 0; i < bytes.length; i += 1) slow.push(bytes.subarray(i, i + 1));
    const { session_id: ___, ...again } = slow.end();
    expect(again).toEqual(expected);
  });
});

test("replay takes lines and async chunks; schemas are the files under schemas/", async () => {
  const text = readFileSync(join(ROOT, "test", "fixtures", "claude", "b-tools.tools.jsonl"), "utf8");
  const whole = await replay(text, "claude");
  const lines = await replay(text.split("\n").filter(Boolean), "claude");
  async function* chunks() {
    for (let i = 0; i < text.length; i += 1000) yield text.slice(i, i + 1000);
  }
  const streamed = await replay(chunks(), "claude");
  expect(lines.text).toBe(whole.text);
  expect(streamed.text).toBe(whole.text);
  expect(whole.status).toBe("completed");
  expect(schemas.verdict).toEqual(JSON.parse(readFileSync(join(ROOT, "schemas", "verdict.json"), "utf8")));
});
