// When a quota wall lifts: the reset time an agent's words carry, as an
// absolute epoch (codex's and pi's `resets_at`) or a delay (gemini's
// `retryDelay`, a `retry-after`, codex's "try again in 2 days 17 hours 14
// minutes", gemini's "Your quota will reset after 2h3m4s") or a local clock
// time (codex's "try again at 7:49 AM" or "… at Sep 26th, 2026 3:05 PM": its
// reset in the local time zone it shares with agentport, which starts it).
// Pure; read only for a run the classifier found at a quota wall.

export interface ResumeHint {
  /** Epoch milliseconds, when the text names the moment. */
  atMs: number | null;
  /** Milliseconds from the run's end, when it names a delay. */
  afterMs: number | null;
  /** A local clock time, when it names one (the date only when not the day it was said). */
  clock?: LocalClock | null;
}

export interface LocalClock {
  /** Calendar date, or null for "the next such time after the run's end". */
  date: { year: number; month: number; day: number } | null;
  hour: number;
  minute: number;
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

/** codex's `%-I:%M %p`, or `%b %-d{st|nd|rd|th}, %Y %-I:%M %p` for another day. */
function clockTime(text: string): LocalClock | null {
  const m = /\btry again at (?:([A-Z][a-z]{2}) (\d{1,2})(?:st|nd|rd|th)?, (\d{4}) )?(\d{1,2}):(\d{2}) ?([AP]M)\b/i.exec(text);
  if (m === null) return null;
  const hour12 = Number(m[4]);
  const minute = Number(m[5]);
  if (hour12 < 1 || hour12 > 12 || minute > 59) return null;
  const hour = (hour12 % 12) + ((m[6] ?? "").toUpperCase() === "PM" ? 12 : 0);
  if (m[1] === undefined) return { date: null, hour, minute };
  const month = MONTHS.indexOf(m[1].toLowerCase());
  const day = Number(m[2]);
  return month === -1 || day < 1 || day > 31 ? null : { date: { year: Number(m[3]), month, day }, hour, minute };
}

/** The moment a local clock time names: its date, or the first such time after `afterMs` (a minute's rounding allowed). */
function clockMoment(clock: LocalClock, afterMs: number | null): number | null {
  if (clock.date !== null) return new Date(clock.date.year, clock.date.month, clock.date.day, clock.hour, clock.minute).getTime();
  if (afterMs === null) return null;
  const base = new Date(afterMs);
  const same = new Date(base.getFullYear(), base.getMonth(), base.getDate(), clock.hour, clock.minute).getTime();
  return same >= afterMs - 60_000
    ? same
    : new Date(base.getFullYear(), base.getMonth(), base.getDate() + 1, clock.hour, clock.minute).getTime();
}

const UNIT_MS: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 };
const MAX_TEXT_CHARS = 20_000;

/** The sum of "2 days 17 hours 14 minutes" or "2h3m4s"; null when nothing is there. */
function duration(text: string): number | null {
  let total = 0;
  let found = false;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)\s*(d(?:ays?)?|h(?:ours?|rs?)?|m(?:in(?:utes?|s)?)?|s(?:ec(?:onds?|s)?)?)(?![a-z])/gi)) {
    const unit = UNIT_MS[(m[2] ?? "").charAt(0).toLowerCase()];
    if (unit === undefined) continue;
    total += Number(m[1]) * unit;
    found = true;
  }
  return found ? Math.round(total) : null;
}

/** The reset the text names, or null. An epoch wins over a delay. */
export function resumeHint(raw: string): ResumeHint | null {
  const text = raw.slice(0, MAX_TEXT_CHARS);
  const epoch = /(?:\bresets_?at\\?"?\s*[:=]\s*|usage limit reached\|)(\d{9,13})\b/i.exec(text)?.[1];
  if (epoch !== undefined) {
    const n = Number(epoch);
    return { atMs: epoch.length >= 13 ? n : n * 1000, afterMs: null };
  }
  const seconds = /\b(?:resets_in_seconds|retry[-_]after(?:[-_]seconds)?)\\?"?\s*[:=]\s*\\?"?(\d+(?:\.\d+)?)/i.exec(text)?.[1];
  if (seconds !== undefined) return { atMs: null, afterMs: Math.round(Number(seconds) * 1000) };
  const delay = /\bretryDelay\\?"?\s*[:=]\s*\\?"?(\d+(?:\.\d+)?)s\b/.exec(text)?.[1];
  if (delay !== undefined) return { atMs: null, afterMs: Math.round(Number(delay) * 1000) };
  const phrase = /\b(?:try again in|reset after|resets? in)\s+((?:\d+(?:\.\d+)?\s*[a-z]+[\s,]*(?:and\s+)?)+)/i.exec(text)?.[1];
  const ms = phrase === undefined ? null : duration(phrase);
  if (ms !== null) return { atMs: null, afterMs: ms };
  const clock = clockTime(text);
  return clock === null ? null : { atMs: null, afterMs: null, clock };
}

/** RFC 3339 of the moment the wall lifts: an absolute reset, else the run's end plus a delay, else a local clock time; null when none is known. */
export function resumeAfter(hints: readonly (ResumeHint | null)[], endedAtMs: number | null): string | null {
  for (const h of hints) if (h?.atMs != null && Number.isFinite(h.atMs)) return new Date(h.atMs).toISOString();
  for (const h of hints) if (h?.afterMs != null && endedAtMs !== null) return new Date(endedAtMs + h.afterMs).toISOString();
  for (const h of hints) {
    const ms = h?.clock ? clockMoment(h.clock, endedAtMs) : null;
    if (ms !== null && Number.isFinite(ms)) return new Date(ms).toISOString();
  }
  return null;
}
