// Numbers read from an agent's stream: believed only when they are plausible.

const MAX_COUNT = 1e15;
// A run that cost more than this is not a reading to believe.
const MAX_COST_USD = 1_000_000;

/** A non-negative integer count, or undefined. */
export function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= MAX_COUNT ? value : undefined;
}

/**
 * `value` USD as integer micro-USD, or undefined when it is no finite,
 * non-negative amount. Rounded half up on the decimal text, so 0.0521950000000005
 * does not drift through binary floating point.
 */
export function microUsd(value: unknown): number | undefined {
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0 || value > MAX_COST_USD) {
    return undefined;
  }
  const [whole = "0", frac = ""] = value.toFixed(12).split(".");
  const micro = Number(whole) * 1_000_000 + Number(frac.slice(0, 6).padEnd(6, "0"));
  return (frac.charCodeAt(6) || 48) >= 53 ? micro + 1 : micro;
}

export function addCapped(a: number, b: number): number {
  return Math.min(a + b, MAX_COUNT);
}
