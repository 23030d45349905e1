// Does a text hold any of a set of literals? One pass that mostly skips
// (Wu-Manber): a window as long as the shortest literal slides along the
// text, and the last two characters under it say how far it may jump before
// any literal could end there. A regex alternation of many literals tries
// each of them at every position (five secrets' forms cost it 5x), this
// pass costs about the same for one literal or a hundred. Pure.
//
// Text as UTF-16 code units (a string) or bytes (a Uint8Array, the literals
// given as their bytes): the same loop over a different `at`.

/** A string's UTF-16 code units, as LiteralScan takes a literal. */
export const codeUnits = (s: string): number[] => Array.from({ length: s.length }, (_, i) => s.charCodeAt(i));

const TABLE_BITS = 12;
const TABLE_MASK = (1 << TABLE_BITS) - 1;
const hash = (a: number, b: number) => ((a << 5) ^ b) & TABLE_MASK;

export class LiteralScan {
  private readonly shortest: number;
  private readonly shift: Uint8Array | Uint16Array;
  /** The literals whose first `shortest` units end in each hash. */
  private readonly ends = new Map<number, number[][]>();

  /** `literals` as code units (or bytes), each at least 2 long. */
  constructor(literals: readonly (readonly number[])[]) {
    this.shortest = Math.min(...literals.map((l) => l.length));
    const m = this.shortest;
    this.shift = m - 1 <= 0xff ? new Uint8Array(TABLE_MASK + 1) : new Uint16Array(TABLE_MASK + 1);
    this.shift.fill(m - 1);
    for (const literal of literals) {
      for (let j = 1; j < m; j++) {
        const h = hash(literal[j - 1]!, literal[j]!);
        this.shift[h] = Math.min(this.shift[h]!, m - 1 - j);
      }
      const h = hash(literal[m - 2]!, literal[m - 1]!);
      const list = this.ends.get(h) ?? [];
      list.push([...literal]);
      this.ends.set(h, list);
    }
  }

  /** Does `text` hold one of the literals? */
  inString(text: string): boolean {
    return this.scan(text.length, (i) => text.charCodeAt(i));
  }

  /** Do `bytes` hold one of the literals (given as bytes)? */
  inBytes(bytes: Uint8Array): boolean {
    return this.scan(bytes.length, (i) => bytes[i]!);
  }

  private scan(n: number, at: (i: number) => number): boolean {
    const m = this.shortest;
    for (let end = m - 1; end < n; ) {
      const h = hash(at(end - 1), at(end));
      const jump = this.shift[h]!;
      if (jump > 0) {
        end += jump;
        continue;
      }
      const start = end - m + 1;
      for (const literal of this.ends.get(h)!) if (matchesAt(literal, start, n, at)) return true;
      end += 1;
    }
    return false;
  }
}

function matchesAt(literal: number[], start: number, n: number, at: (i: number) => number): boolean {
  if (start + literal.length > n) return false;
  for (let k = 0; k < literal.length; k++) if (at(start + k) !== literal[k]) return false;
  return true;
}
