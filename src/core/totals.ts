// A session's totals over its finished phases: what is known is summed, and
// the total says when it is partial (a phase without a cost or tokens), so a
// missing figure never hides the spend of the others ($0.0002+). Pure.

export interface PhaseFigures {
  ended_at: string | null;
  status: string | null;
  tokens_in: number | null;
  tokens_out: number | null;
  tokens_cache_read: number | null;
  tokens_cache_write: number | null;
  cost_micro_usd: number | null;
  seconds: number | null;
}

export const SUMMED = ["tokens_in", "tokens_out", "tokens_cache_read", "tokens_cache_write", "cost_micro_usd", "seconds"] as const;
export type Summed = (typeof SUMMED)[number];

export type Totals = Record<Summed, number | null> & {
  phase_count: number;
  last_status: string | null;
  /** Some finished phase lacks one of the figures: each sum is a lower bound. */
  partial: boolean;
};

/** Sums over the finished phases (null when none of them knows a figure), in ledger order (seq). */
export function totalsOf(phases: readonly PhaseFigures[]): Totals {
  const finished = phases.filter((p) => p.ended_at !== null);
  const totals = { phase_count: phases.length, last_status: phases.at(-1)?.status ?? null, partial: false } as Totals;
  for (const column of SUMMED) {
    const known = finished.map((p) => p[column]).filter((v): v is number => v !== null);
    totals[column] = known.length === 0 ? null : known.reduce((a, b) => a + b, 0);
    if (known.length < finished.length && column !== "seconds") totals.partial = true;
  }
  return totals;
}

/** A cost for the eye: `$0.0012`, `$0.0002+` when partial, `-` when unknown. */
export function money(micro: number | null, partial = false): string {
  return micro === null ? "-" : `$${(micro / 1e6).toFixed(4)}${partial ? "+" : ""}`;
}
