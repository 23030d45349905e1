// When a quota wall lifts (src/core/wall.ts): each agent's words, as its fixture records them.
import { expect, test } from "bun:test";
import { resumeAfter, resumeHint } from "../src/core/wall.ts";

const END = Date.parse("2026-12-01T21:00:00Z");
const at = (text: string) => resumeAfter([resumeHint(text)], END);

test.each([
  [
    'Codex error: {"type":"error","error":{"type":"usage_limit_reached","resets_at":1777936568,"resets_in_seconds":13872}}',
    "2026-05-04T23:16:08.000Z",
  ],
  [
    "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 days 17 hours 14 minutes.",
    new Date(END + ((2 * 24 + 17) * 60 + 14) * 60_000).toISOString(),
  ],
  [
    '{"error":{"code":429,"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3600s"}]}}',
    new Date(END + 3_600_000).toISOString(),
  ],
  ["429 Too Many Requests (retry-after: 7200)", new Date(END + 7_200_000).toISOString()],
  [
    "You have exhausted your capacity on this model. Your quota will reset after 2h3m4s.",
    new Date(END + (2 * 3600 + 3 * 60 + 4) * 1000).toISOString(),
  ],
  ["Claude AI usage limit reached|1774447200", "2026-03-25T14:00:00.000Z"],
  ["You have exhausted your daily quota on this model.", null],
  ["You've hit your session limit · resets 10:10pm (UTC)", null],
])("%s → %s", (text, expected) => {
  expect(at(text)).toBe(expected);
});

test("a delay needs the run's end; an epoch does not", () => {
  expect(resumeAfter([resumeHint("try again in 5 minutes")], null)).toBeNull();
  expect(resumeAfter([null, resumeHint('"resets_at":1777936568')], null)).toBe("2026-05-04T23:16:08.000Z");
});
