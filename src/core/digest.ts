// Digests for the loop observer: a tool call is known by its name and the
// digest of its input and result, so nothing of the input itself leaves.
//
// A value's digest hashes its canonical form (object keys sorted) in which
// every string stands as the hash of its UTF-16 code units. So a string the
// record scanner (scan.ts) never decoded, hashed straight from its JSON bytes
// into a `Digested`, gives the same digest as the parsed string.

/** cyrb53's two lanes: a fast 53-bit hash, not cryptographic; collisions only blur loop detection. */
export const SEED1 = 0xdeadbeef;
export const SEED2 = 0x41c6ce57;
export const MUL1 = 2654435761;
export const MUL2 = 1597334677;

/** The final mix of the two lanes, as 14 hex digits. */
export function finish(a: number, b: number): string {
  const h1 = Math.imul(a ^ (a >>> 16), 2246822507) ^ Math.imul(b ^ (b >>> 13), 3266489909);
  const h2 = Math.imul(b ^ (b >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(16).padStart(14, "0");
}

/** The hash of a string's UTF-16 code units. */
export function stringHash(text: string): string {
  let h1 = SEED1;
  let h2 = SEED2;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, MUL1);
    h2 = Math.imul(h2 ^ ch, MUL2);
  }
  return finish(h1, h2);
}

/** A string the scanner left undecoded: only its hash (stringHash of its value) is known. */
export class Digested {
  constructor(readonly hash: string) {}
}

/** A string nobody digests: the scanner did not even hash it. */
export const UNHASHED = new Digested("");

/** A value the reducers never read, passed over by the scanner. */
export class Skipped {}
export const SKIPPED = new Skipped();

/** JSON with object keys sorted and strings as their hash, so equal values give equal text. */
function canonical(value: unknown): string {
  if (typeof value === "string") return `$${stringHash(value)}`;
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value instanceof Digested) return `$${value.hash}`;
  if (value instanceof Skipped) return "?";
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(record[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export function digest(value: unknown): string {
  try {
    return stringHash(canonical(value));
  } catch {
    // Nesting past the stack: still a stable answer for the same value.
    return "deep";
  }
}
