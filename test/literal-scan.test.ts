// The skipping scan the redactor trusts to say "no known value here": on
// random literals (ASCII, non-ASCII, surrogate pairs) and random texts with
// literals, their prefixes and their near misses planted, it answers as a
// regex alternation of the same literals does, on text and on its UTF-8 bytes.
import { expect, test } from "bun:test";
import { codeUnits, LiteralScan } from "../src/core/literal-scan.ts";

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = [..."abcAB01+/=%\\u_-", "é", "日", "😀"];
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

test("the scan agrees with a regex alternation, on text and on bytes", () => {
  const random = rng(7);
  const pick = () => ALPHABET[Math.floor(random() * ALPHABET.length)]!;
  const word = (n: number) => Array.from({ length: n }, pick).join("");
  const encoder = new TextEncoder();
  let found = 0;
  for (let round = 0; round < 300; round++) {
    const literals = Array.from({ length: 1 + Math.floor(random() * 12) }, () => word(6 + Math.floor(random() * 20)));
    const scan = new LiteralScan(literals.map(codeUnits));
    const bytes = new LiteralScan(literals.map((l) => [...encoder.encode(l)]));
    const regex = new RegExp(literals.map(escapeRegExp).join("|"));
    for (let t = 0; t < 20; t++) {
      const parts: string[] = [];
      for (let k = 0; k < 8; k++) {
        const literal = literals[Math.floor(random() * literals.length)]!;
        const r = random();
        parts.push(r < 0.1 ? literal : r < 0.4 ? literal.slice(0, -1) : r < 0.6 ? literal.slice(1) : word(Math.floor(random() * 30)));
      }
      const text = parts.join("");
      const expected = regex.test(text);
      if (expected) found++;
      expect({ text, held: scan.inString(text) }).toEqual({ text, held: expected });
      expect({ text, held: bytes.inBytes(encoder.encode(text)) }).toEqual({ text, held: expected });
    }
  }
  expect(found).toBeGreaterThan(500);
});
