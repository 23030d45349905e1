// Ranking the arms of a best-of-N batch: green first, then the cheapest, then
// the fastest; the arm number breaks the last tie, so the order is total and
// the same on every run. No composite score: one variable at a time, the way
// a reviewer reads the table. An unknown cost or time ranks after every known
// one (it proves nothing). Used by `bon` on one box and by a fleet's arms
// (`submit --arms`). Pure: no Bun, no Node.
import type { Tokens } from "./verdict.ts";

export interface Rankable {
  /** 1-based arm number. */
  arm: number;
  green: boolean;
  /** The arm's own cost (after minus at clone), or null when pi did not say. */
  costMicroUsd: number | null;
  seconds: number | null;
}

const known = (value: number | null): value is number => value !== null && Number.isFinite(value);

/** Ascending, an unknown value after every known one. */
function compareKnown(a: number | null, b: number | null): number {
  if (known(a) && known(b)) return a - b;
  if (known(a)) return -1;
  if (known(b)) return 1;
  return 0;
}

export function compareArms(a: Rankable, b: Rankable): number {
  if (a.green !== b.green) return a.green ? -1 : 1;
  return compareKnown(a.costMicroUsd, b.costMicroUsd) || compareKnown(a.seconds, b.seconds) || a.arm - b.arm;
}

/** A new array, best first; the input is left as it is. */
export function rankArms<T extends Rankable>(arms: readonly T[]): T[] {
  return [...arms].sort(compareArms);
}

/** The first arm of a ranking when it is green, else null (no arm to propose). */
export function winnerOf<T extends Rankable>(ranked: readonly T[]): T | null {
  const first = ranked[0];
  return first !== undefined && first.green ? first : null;
}

/** Every token an arm counted, or null when unknown. */
export const totalTokens = (t: Tokens | null): number | null => (t === null ? null : t.input + t.output + t.cache_read + t.cache_write);

/** Rows (the first the header) as a fixed-width table: the columns in `right` aligned right, the last left as it is. */
export function fixedWidth(rows: string[][], right: ReadonlySet<number>): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? "").length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : right.has(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
