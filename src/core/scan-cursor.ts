// The byte side of the record scanner (scan.ts): a cursor over one line's
// well-formed UTF-8 bytes that checks JSON's grammar as it moves past numbers,
// strings and literals, and throws FALLBACK where JSON.parse must decide.

export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
const MINUS = 0x2d;
export const EMPTY = new Uint8Array(0);
export const TRUE = [0x74, 0x72, 0x75, 0x65];
export const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
export const NULL = [0x6e, 0x75, 0x6c, 0x6c];
// The UTF-16 unit of each one-letter escape, by its letter; 0 where invalid.
export const ESCAPES = new Uint16Array(128);
for (const [letter, unit] of [
  ['"', 0x22],
  ["\\", 0x5c],
  ["/", 0x2f],
  ["b", 8],
  ["f", 12],
  ["n", 10],
  ["r", 13],
  ["t", 9],
] as const) {
  ESCAPES[letter.charCodeAt(0)] = unit;
}

// Bytes that may stand in a string as they are: not a quote, a backslash or a control character.
const PLAIN = new Uint8Array(256).fill(1, 0x20);
PLAIN[QUOTE] = 0;
PLAIN[BACKSLASH] = 0;

/** Thrown (one instance, no stack) when JSON.parse must decide. */
export const FALLBACK = { fallback: true };

const isDigit = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;

export function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x57 : -1;
}

export class JsonCursor {
  protected b: Uint8Array = EMPTY;
  protected i = 0;
  protected n = 0;

  protected space(): void {
    const b = this.b;
    let i = this.i;
    for (;;) {
      const c = b[i];
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i += 1;
    }
    this.i = i;
  }

  protected expect(byte: number): void {
    this.space();
    if (this.b[this.i] !== byte) throw FALLBACK;
    this.i += 1;
    this.space();
  }

  /** After a member or an item: true at the closing byte (consumed), false after a comma. */
  protected closes(close: number): boolean {
    this.space();
    const c = this.b[this.i];
    this.i += 1;
    if (c === close) return true;
    if (c !== COMMA) throw FALLBACK;
    this.space();
    return false;
  }

  protected literal(word: readonly number[]): void {
    const b = this.b;
    for (let k = 0; k < word.length; k++) if (b[this.i + k] !== word[k]) throw FALLBACK;
    this.i += word.length;
  }

  /** The number at `i`, as JSON.parse reads it. */
  protected numberValue(): number {
    const b = this.b;
    const start = this.i;
    this.number();
    const end = this.i;
    // Up to 15 digits, an integer is exact as it is summed; anything else is Number()'s.
    let k = b[start] === MINUS ? start + 1 : start;
    if (end - k <= 15) {
      let value = 0;
      while (k < end && isDigit(b[k])) value = value * 10 + (b[k++]! - 0x30);
      if (k === end) return b[start] === MINUS ? -value : value;
    }
    let text = "";
    for (let at = start; at < end; at++) text += String.fromCharCode(b[at]!);
    return Number(text);
  }

  /** Moves past a JSON number, checking its grammar. */
  protected number(): void {
    const b = this.b;
    let i = this.i;
    if (b[i] === MINUS) i += 1;
    if (b[i] === 0x30) i += 1;
    else if (isDigit(b[i])) while (isDigit(b[i])) i += 1;
    else throw FALLBACK;
    if (b[i] === 0x2e) {
      i += 1;
      if (!isDigit(b[i])) throw FALLBACK;
      while (isDigit(b[i])) i += 1;
    }
    if (b[i] === 0x65 || b[i] === 0x45) {
      i += 1;
      if (b[i] === 0x2b || b[i] === MINUS) i += 1;
      if (!isDigit(b[i])) throw FALLBACK;
      while (isDigit(b[i])) i += 1;
    }
    this.i = i;
  }

  /** Moves past the escape at `i` (its backslash), checking it. */
  protected escape(i: number): number {
    const letter = this.b[i + 1];
    if (letter === undefined) throw FALLBACK;
    if (letter !== 0x75) {
      if (letter >= 128 || ESCAPES[letter] === 0) throw FALLBACK;
      return i + 2;
    }
    for (let k = 2; k < 6; k++) if (hexValue(this.b[i + k]) < 0) throw FALLBACK;
    return i + 6;
  }

  /** Moves past the string at `i`, checking it; true when it has escapes. */
  protected pass(): boolean {
    const b = this.b;
    const n = this.n;
    let i = this.i + 1;
    let escaped = false;
    for (;;) {
      // Past the end b[i] is undefined, which is not plain: the loop needs no bound check (measured: 5–25% faster).
      while (PLAIN[b[i]!] === 1) i += 1;
      if (i >= n) throw FALLBACK;
      const c = b[i]!;
      if (c === QUOTE) break;
      if (c !== BACKSLASH) throw FALLBACK;
      escaped = true;
      // The one-letter escapes inline: in code and logs one byte in ten is one.
      const letter = b[i + 1];
      if (letter !== undefined && letter < 128 && ESCAPES[letter] !== 0) i += 2;
      else i = this.escape(i);
    }
    this.i = i + 1;
    return escaped;
  }
}
