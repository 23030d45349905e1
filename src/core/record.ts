// One stdout line as a JSON record with a string `type`, or why it is not one.
// Shared by the reducers: every agent's stream is one JSON object per line.
// Small lines are parsed whole; big ones are scanned (scan.ts) into the same
// shape, with the values no reducer reads left undecoded.

export type Json = Record<string, unknown>;

export type Parsed = { ok: true; record: Json & { type: string } } | { ok: false; why: string };

export function parseRecord(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    // Not JSON, or past the parser's own nesting limit.
    return { ok: false, why: "a stdout line is not JSON" };
  }
  return recordOf(value);
}

/** A parsed JSON value as a record, or why it is not one. */
export function recordOf(value: unknown): Parsed {
  if (value === null || typeof value !== "object" || Array.isArray(value) || typeof (value as Json).type !== "string") {
    return { ok: false, why: "a stdout line is not a JSON object with a 'type'" };
  }
  return { ok: true, record: value as Json & { type: string } };
}

/** `value` when it is a JSON object (not null, not an array), else null. */
export function objectOf(value: unknown): Json | null {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Json) : null;
}
