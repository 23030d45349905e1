// Every stream captured from real claude 2.1.197 (../shared/fixtures/claude,
// copied into test/fixtures/claude), replayed through the compiled binary,
// gives the verdict its ground truth describes.
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { VerdictSchema } from "../src/core/verdict.ts";
import { agentport, ROOT } from "./helpers.ts";

const DIR = join(ROOT, "test", "fixtures", "claude");

interface Expected {
  exit: number;
  status: string;
  text?: string;
  failure?: string;
  refused?: number;
  retries?: number;
  cost?: number;
}

const ok = (text: string, extra: Partial<Expected> = {}): Expected => ({ exit: 0, status: "completed", text, refused: 0, ...extra });
const denied = (): Expected => ok("The command was not permitted.", { refused: 1 });
const apiError = (failure: string, retries: number, exit = 1): Expected => ({ exit, status: "failed", failure, retries, cost: 0 });
const noResult: Expected = { exit: 1, status: "failed", failure: "exited without a result event" };

const EXPECTED: Record<string, Expected> = {
  // --output-format stream-json without --verbose, and variadic --allowedTools: claude printed nothing.
  "a-plain.noverbose": noResult,
  "b-tools.variadic": noResult,
  "g-stdin.empty-stdin": noResult,
  "d-permission.stdio-eof": noResult,
  "a-plain.plain": ok("Hello from the stand-in. The answer is 4.", { cost: 16055 }),
  // --output-format text is no stream-json.
  "a-plain.text": { exit: 1, status: "failed", failure: "a stdout line is not JSON" },
  "b-tools.tools": ok("Done. The secret word is pineapple.", { cost: 52195 }),
  // An API failure is subtype success with is_error true (ground truth §4); 401 is an environment fault.
  "c-errors.auth401": apiError("api_error_status 401", 2, 5),
  "c-errors.badrequest": apiError("api_error_status 400", 0),
  "c-errors.server500": apiError("api_error_status 500", 2),
  "c-errors.overloaded": apiError("Repeated 529 Overloaded errors", 2),
  "c-errors.overloaded-default": apiError("Repeated 529 Overloaded errors", 2),
  "c-errors.overloaded-json": apiError("Repeated 529 Overloaded errors", 0),
  // A mid-stream SSE error is retried silently.
  "c-errors.midstream": ok("Recovered after a mid-stream error.", { retries: 0 }),
  "c-errors.ratelimit": ok("Recovered after 429.", { retries: 1 }),
  "c-errors.recover": ok("Recovered after retries.", { retries: 2 }),
  "d-permission.default-mode": denied(),
  "d-permission.default-mode-shoji": denied(),
  "d-permission.deny-rule": denied(),
  "d-permission.deny-rule-shoji": denied(),
  "d-permission.deny-settings": denied(),
  "d-permission.dontask": denied(),
  "d-permission.dontask-shoji": denied(),
  "d-permission.dontask-json": denied(),
  "d-permission.stdio-ask": denied(),
  "d-permission.stdio-deny-rule": denied(),
  "d-permission.stdio-dontask": denied(),
  // --disallowedTools=Bash: the tool is not offered, so nothing is refused.
  "d-permission.tool-removed": ok("The command was not permitted."),
  "e-json.plain": ok("Hello from the stand-in. The answer is 4."),
  "e-json.tool": ok("The file has two lines: alpha and beta."),
  // json --verbose prints one JSON array: no stream-json either.
  "e-json.plain-verbose": { exit: 1, status: "failed", failure: "not a JSON object with a 'type'" },
  "f-resume.first": ok("Answer to the first question."),
  "f-resume.resume": ok("Answer to the second question."),
  "f-resume.resume-fork": ok("Answer to the second question."),
  "f-resume.resume-json": ok("Answer to the third question."),
  "f-resume.continue": ok("Answer to the third question."),
  "f-resume.resume-other-cwd": { exit: 1, status: "failed", failure: "No conversation found with session ID" },
  "f-resume.resume-unknown": { exit: 1, status: "failed", failure: "No conversation found with session ID" },
  "f-resume.resume-garbage": { exit: 1, status: "failed", failure: "--resume requires a valid session ID" },
  "g-stdin.stdin-only": ok("Got your prompt."),
  "g-stdin.stdin-and-arg": ok("Got your prompt."),
  "i-thinking-hooks.hooks": ok("Ran it."),
  "i-thinking-hooks.hooks-events": ok("Ran it."),
  "i-thinking-hooks.thinking": ok("4"),
  "i-thinking-hooks.thinking-partial": ok("4"),
};

const captured = readdirSync(DIR)
  .filter((f) => f.endsWith(".jsonl"))
  .map((f) => f.slice(0, -".jsonl".length))
  .sort();

describe("replay of every captured claude 2.1.197 stream", () => {
  test("every capture has an expected verdict", () => {
    expect(captured.filter((name) => !(name in EXPECTED))).toEqual([]);
    expect(captured.length).toBe(Object.keys(EXPECTED).length);
  });

  test.each(captured)("%s", async (name) => {
    const want = EXPECTED[name] as Expected;
    const ran = await agentport(["replay", "--agent", "claude", join(DIR, `${name}.jsonl`), "--json"]);
    expect(ran.code).toBe(want.exit);
    const verdict = VerdictSchema.parse(JSON.parse(ran.stdout));
    expect(verdict.status).toBe(want.status as never);
    expect(verdict.ok).toBe(want.status === "completed");
    if (want.text !== undefined) expect(verdict.text).toBe(want.text);
    if (want.failure !== undefined) expect(verdict.failure?.message).toContain(want.failure);
    if (want.refused !== undefined) expect(verdict.refused.length).toBe(want.refused);
    if (want.retries !== undefined) expect(verdict.summary.api_retries).toBe(want.retries);
    if (want.cost !== undefined) expect(verdict.cost_micro_usd).toBe(want.cost);
    // Nothing of the captured tool results or commands leaks into the verdict.
    expect(ran.stdout).not.toContain("echo hello-from-bash");
    if (want.status !== "completed") expect(verdict.text).toBeNull();
  });
});
