// Ranking the arms of a best-of-N batch: green first, then the cheapest, then
// the fastest; the arm number breaks the last tie, so the order is total and
// the same on every run. No composite score: one variable at a time, the way
// a reviewer reads the table. An unknown cost or time ranks after every known
// one (it proves nothing). Pure: no Bun, no Node.

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
