// When a quota wall lifts: the reset time an agent's words carry, as an
// absolute epoch (codex's and pi's `resets_at`) or a delay (gemini's
// `retryDelay`, a `retry-after`, codex's "try again in 2 days 17 hours 14
// minutes", gemini's "Your quota will reset after 2h3m4s"). Pure; read only
// for a run the classifier found at a quota wall.

export interface ResumeHint {
  /** Epoch milliseconds, when the text names the moment. */
  atMs: number | null;
  /** Milliseconds from the run's end, when it names a delay. */
  afterMs: number | null;
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
  return ms === null ? null : { atMs: null, afterMs: ms };
}

/** RFC 3339 of the moment the wall lifts: an absolute reset, else the run's end plus a delay; null when neither is known. */
export function resumeAfter(hints: readonly (ResumeHint | null)[], endedAtMs: number | null): string | null {
  for (const h of hints) if (h?.atMs != null && Number.isFinite(h.atMs)) return new Date(h.atMs).toISOString();
  for (const h of hints) if (h?.afterMs != null && endedAtMs !== null) return new Date(endedAtMs + h.afterMs).toISOString();
  return null;
}
