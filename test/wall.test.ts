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

// codex prints its reset as a local clock time (its format_retry_timestamp): `%-I:%M %p` the same
// day, `%b %-d{suffix}, %Y %-I:%M %p` another day; the expectations are built in the local zone too.
const local = (...parts: [number, number, number, number, number]) => new Date(...parts).toISOString();
test.each([
  ["You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro) or try again at 11:49 PM.", local(2026, 11, 1, 23, 49)],
  ["You've hit your usage limit. Try again at Sep 26th, 2026 3:05 PM.", local(2026, 8, 26, 15, 5)],
  ["You've hit your usage limit. Try again at Dec 2nd, 2026 12:05 AM.", local(2026, 11, 2, 0, 5)],
  ["You've hit your usage limit. Try again at 13:05 PM.", null],
  ["You've hit your usage limit. Try again at Foo 2nd, 2026 1:05 AM.", null],
  ["You've hit your usage limit. Try again later.", null],
])("codex's local clock: %s → %s", (text, expected) => {
  // The run ended at 21:00 local; a time-only reset is the next such time after it.
  expect(resumeAfter([resumeHint(text)], new Date(2026, 11, 1, 21, 0).getTime())).toBe(expected);
});

test("a time-only clock already past at the run's end is the next day's; one a minute past is today's (codex rounds to the minute)", () => {
  const end = new Date(2026, 11, 1, 21, 0, 30).getTime();
  expect(resumeAfter([resumeHint("or try again at 8:59 PM.")], end)).toBe(local(2026, 11, 2, 20, 59));
  expect(resumeAfter([resumeHint("or try again at 9:00 PM.")], end)).toBe(local(2026, 11, 1, 21, 0));
  expect(resumeAfter([resumeHint("or try again at 9:00 PM.")], null)).toBeNull();
});
