// The record scanner: one big JSON line, as bytes, into the record a reducer
// reads, without materializing what it never reads. Pure; runs on any runtime.
//
// A plan (scan-plan.ts) says per path what a value is for: "keep" builds it
// exactly as JSON.parse would; "digest" leaves every string undecoded, as a
// `Digested` carrying the hash digest() gives the decoded string (hashed only
// when a loop observer listens); "skip" leaves SKIPPED. The bytes are walked
// by the cursor (scan-cursor.ts).
//
// Whatever the scanner cannot vouch for (not JSON, nesting past MAX_DEPTH, a
// repeated switch key with another value) goes to JSON.parse on the decoded
// line, so every verdict on bad input is JSON.parse's own. The input is
// well-formed UTF-8: the framer checks it before `bigLine`.
import { Digested, finish, MUL1, MUL2, SEED1, SEED2, SKIPPED, UNHASHED } from "./digest.ts";
import { parseRecord, recordOf, type Json, type Parsed } from "./record.ts";
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  EMPTY,
  ESCAPES,
  FALLBACK,
  FALSE,
  hexValue,
  JsonCursor,
  NULL,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
  TRUE,
} from "./scan-cursor.ts";
import { caseOf, itemPlan, memberPlan, own, type Plan } from "./scan-plan.ts";

const MAX_DEPTH = 256;
// Short ASCII keys and values recur on every record: decoded once, then looked up.
const INTERN_SLOTS = 1024;
const INTERN_MAX_BYTES = 32;

export class RecordScanner extends JsonCursor {
  private readonly plan: Plan;
  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  private hashing = false;
  private readonly interned: (string | undefined)[] = new Array<string | undefined>(INTERN_SLOTS);
  /** Records left to JSON.parse so far. */
  fallbacks = 0;

  constructor(plan: Plan) {
    super();
    this.plan = plan;
  }

  /** The record in `bytes` (well-formed UTF-8); `hashing`: digest strings are hashed. */
  scan(bytes: Uint8Array, hashing: boolean): Parsed {
    this.b = bytes;
    this.n = bytes.length;
    this.i = 0;
    this.hashing = hashing;
    try {
      this.space();
      if (bytes[this.i] !== OPEN_OBJECT) throw FALLBACK;
      const value = this.object(this.plan, 0);
      this.space();
      if (this.i !== this.n) throw FALLBACK;
      return recordOf(value);
    } catch (error) {
      if (error !== FALLBACK) throw error;
      this.fallbacks += 1;
      return parseRecord(this.decoder.decode(bytes));
    } finally {
      // Never hold a record's bytes past its scan.
      this.b = EMPTY;
    }
  }

  private value(plan: Plan, depth: number): unknown {
    if (plan === "skip") {
      this.skip(depth);
      return SKIPPED;
    }
    switch (this.b[this.i]) {
      case QUOTE:
        return plan === "digest" ? this.digested() : this.string();
      case OPEN_OBJECT:
        return this.object(plan, depth + 1);
      case OPEN_ARRAY:
        return this.array(plan, depth + 1);
      case 0x74:
        this.literal(TRUE);
        return true;
      case 0x66:
        this.literal(FALSE);
        return false;
      case 0x6e:
        this.literal(NULL);
        return null;
      default:
        return this.numberValue();
    }
  }

  private object(plan: Plan, depth: number): Json {
    if (depth > MAX_DEPTH) throw FALLBACK;
    const record: Json = {};
    let members = plan;
    // Switches resolved so far: their key and the value that chose the case.
    let chosen: [string, unknown][] | null = null;
    this.expect(OPEN_OBJECT);
    if (this.b[this.i] === CLOSE_OBJECT) {
      this.i += 1;
      return record;
    }
    do {
      if (this.b[this.i] !== QUOTE) throw FALLBACK;
      const key = this.string();
      this.expect(COLON);
      const value = this.value(memberPlan(members, key), depth);
      if (key === "__proto__") Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true });
      else record[key] = value;
      if (chosen !== null) for (const [on, was] of chosen) if (on === key && value !== was) throw FALLBACK;
      // A switch picks the plan for the members after its key (and may lead to another).
      while (typeof members === "object" && "on" in members && own(record, members.on)) {
        (chosen ??= []).push([members.on, record[members.on]]);
        members = caseOf(members, record[members.on]);
      }
    } while (!this.closes(CLOSE_OBJECT));
    return record;
  }

  private array(plan: Plan, depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw FALLBACK;
    const items: unknown[] = [];
    const item = itemPlan(plan);
    this.expect(OPEN_ARRAY);
    if (this.b[this.i] === CLOSE_ARRAY) {
      this.i += 1;
      return items;
    }
    do items.push(this.value(item, depth));
    while (!this.closes(CLOSE_ARRAY));
    return items;
  }

  /** Checks a value's syntax and moves past it, building nothing. */
  private skip(depth: number): void {
    if (depth > MAX_DEPTH) throw FALLBACK;
    const c = this.b[this.i];
    if (c === QUOTE) this.pass();
    else if (c === OPEN_OBJECT) {
      this.expect(OPEN_OBJECT);
      if (this.b[this.i] === CLOSE_OBJECT) this.i += 1;
      else {
        do {
          if (this.b[this.i] !== QUOTE) throw FALLBACK;
          this.pass();
          this.expect(COLON);
          this.skip(depth + 1);
        } while (!this.closes(CLOSE_OBJECT));
      }
    } else if (c === OPEN_ARRAY) {
      this.expect(OPEN_ARRAY);
      if (this.b[this.i] === CLOSE_ARRAY) this.i += 1;
      else {
        do this.skip(depth + 1);
        while (!this.closes(CLOSE_ARRAY));
      }
    } else if (c === 0x74) this.literal(TRUE);
    else if (c === 0x66) this.literal(FALSE);
    else if (c === 0x6e) this.literal(NULL);
    else this.number();
  }

  /** The string at `i`, decoded as JSON.parse would. */
  private string(): string {
    const b = this.b;
    const start = this.i + 1;
    const escaped = this.pass();
    const end = this.i - 1;
    if (escaped) return JSON.parse(this.decoder.decode(b.subarray(start - 1, end + 1))) as string;
    const length = end - start;
    if (length > INTERN_MAX_BYTES) return this.decoder.decode(b.subarray(start, end));
    let h = length;
    for (let k = start; k < end; k++) {
      const c = b[k]!;
      if (c >= 0x80) return this.decoder.decode(b.subarray(start, end));
      h = Math.imul(h ^ c, 0x01000193);
    }
    const slot = (h >>> 7) & (INTERN_SLOTS - 1);
    const known = this.interned[slot];
    if (known !== undefined && known.length === length) {
      let k = 0;
      while (k < length && known.charCodeAt(k) === b[start + k]) k += 1;
      if (k === length) return known;
    }
    const text = this.decoder.decode(b.subarray(start, end));
    this.interned[slot] = text;
    return text;
  }

  /** The string at `i`, undecoded: hashed from its bytes as stringHash hashes the decoded one. */
  private digested(): Digested {
    if (!this.hashing) {
      this.pass();
      return UNHASHED;
    }
    const b = this.b;
    const n = this.n;
    let i = this.i + 1;
    let h1 = SEED1;
    let h2 = SEED2;
    for (;;) {
      if (i >= n) throw FALLBACK;
      const c = b[i]!;
      if (c === QUOTE) break;
      let unit: number;
      if (c < 0x80) {
        if (c === BACKSLASH) {
          const letter = b[i + 1]!;
          const next = this.escape(i);
          unit =
            letter === 0x75
              ? (hexValue(b[i + 2]) << 12) | (hexValue(b[i + 3]) << 8) | (hexValue(b[i + 4]) << 4) | hexValue(b[i + 5])
              : ESCAPES[letter]!;
          i = next;
        } else if (c < 0x20) throw FALLBACK;
        else {
          unit = c;
          i += 1;
        }
      } else {
        // Well-formed UTF-8 (checked by the framer): decode the code point.
        let point: number;
        if (c < 0xe0) {
          point = ((c & 0x1f) << 6) | (b[i + 1]! & 0x3f);
          i += 2;
        } else if (c < 0xf0) {
          point = ((c & 0x0f) << 12) | ((b[i + 1]! & 0x3f) << 6) | (b[i + 2]! & 0x3f);
          i += 3;
        } else {
          point = ((c & 0x07) << 18) | ((b[i + 1]! & 0x3f) << 12) | ((b[i + 2]! & 0x3f) << 6) | (b[i + 3]! & 0x3f);
          i += 4;
        }
        if (point >= 0x10000) {
          // Astral: two UTF-16 units, the high surrogate first.
          point -= 0x10000;
          const high = 0xd800 + (point >> 10);
          h1 = Math.imul(h1 ^ high, MUL1);
          h2 = Math.imul(h2 ^ high, MUL2);
          unit = 0xdc00 + (point & 0x3ff);
        } else unit = point;
      }
      h1 = Math.imul(h1 ^ unit, MUL1);
      h2 = Math.imul(h2 ^ unit, MUL2);
    }
    this.i = i + 1;
    return new Digested(finish(h1, h2));
  }
}
