// The token budget guard: weighs a run's cumulative token usage against a cap.
// Pure: the driver passes the run's totals so far and the time (ms) in.
//
// weighted = input + output + cache_write + W × cache_read, rounded down.
// Cache reads are billed at about a tenth of fresh input, hence W = 0.1; with
// W = 1 a long session that re-reads its cached context every turn would trip
// the cap long before it has spent what the cap means.
//
// Over the cap (weighted > max) the guard warns once, in both modes. In
// enforce mode it asks for a stop once `graceMs` has passed since it first
// went over, so a run about to finish gets to finish (240 s by default, as the
// orchestrator this is modelled on). The first sample over the cap always
// returns the warn; with graceMs 0 the stop comes from the next sample or tick.
import type { z } from "zod";
import { lazySchema } from "./lazy-schema.ts";
import { clean } from "./text.ts";
import type { Tokens } from "./verdict.ts";

export const BUDGET_MODES = ["warn", "enforce"] as const;
export type BudgetMode = (typeof BUDGET_MODES)[number];

export const DEFAULT_CACHE_READ_WEIGHT = 0.1;
export const DEFAULT_BUDGET_GRACE_MS = 240_000;
/** `--max-tokens` without `--budget` enforces: a flag named "max" that only warned would surprise. */
export const DEFAULT_BUDGET_MODE: BudgetMode = "enforce";

export const BudgetOptionsSchema = lazySchema((z) =>
  z.strictObject({
    maxTokens: z.number().int().positive(),
    mode: z.enum(BUDGET_MODES).default(DEFAULT_BUDGET_MODE),
    cacheReadWeight: z.number().min(0).max(1).default(DEFAULT_CACHE_READ_WEIGHT),
    graceMs: z.number().int().nonnegative().default(DEFAULT_BUDGET_GRACE_MS),
  }),
);
/** What `new BudgetGuard` takes: only maxTokens is required. */
export type BudgetOptionsInput = z.input<typeof BudgetOptionsSchema>;
export type BudgetOptions = z.output<typeof BudgetOptionsSchema>;

/** The CLI flags as citty hands them over: strings, absent when not given. */
export const BudgetFlagsSchema = lazySchema((z) =>
  z.object({
    maxTokens: z.string().optional(),
    budget: z.string().optional(),
    cacheReadWeight: z.string().optional(),
    budgetGrace: z.string().optional(),
  }),
);
export type BudgetFlags = z.infer<typeof BudgetFlagsSchema>;

export type BudgetEvent = { kind: "warn" | "stop"; weighted: number; max: number };

export interface BudgetState {
  /** The highest weighted figure sampled so far. */
  weighted: number;
  max: number;
  over: boolean;
  /** When it first went over (the caller's clock, ms), else null. */
  overSinceMs: number | null;
  /** Enforce mode asked for a stop. */
  stopped: boolean;
}

const tokenCount = (n: number): number => (Number.isFinite(n) && n > 0 ? n : 0);

/** input + output + cache_write + W × cache_read, rounded down (W = 0.1 by default). */
export function weightedTokens(t: Tokens, cacheReadWeight = DEFAULT_CACHE_READ_WEIGHT): number {
  const raw = tokenCount(t.input) + tokenCount(t.output) + tokenCount(t.cache_write) + cacheReadWeight * tokenCount(t.cache_read);
  // 15 significant digits first, so 0.57 × 100 (56.99999999999999) floors to 57.
  return Math.floor(Number(raw.toPrecision(15)));
}

export class BudgetGuard {
  readonly options: BudgetOptions;
  /** The highest weighted figure sampled: samples are totals, so this is the run's. */
  private peak = 0;
  private over = false;
  private overSinceMs: number | null = null;
  private stopped = false;

  constructor(options: BudgetOptionsInput) {
    this.options = BudgetOptionsSchema.parse(options);
  }

  /** `t` weighted with this guard's cache-read weight. */
  weighted(t: Tokens): number {
    return weightedTokens(t, this.options.cacheReadWeight);
  }

  /**
   * The run's cumulative tokens so far, at `nowMs`. Returns the warn when it
   * first goes over, the stop (enforce mode) once the grace has passed, else
   * null. A lower sample than before changes nothing.
   */
  sample(tokens: Tokens, nowMs: number): BudgetEvent | null {
    this.peak = Math.max(this.peak, this.weighted(tokens));
    if (!this.over && this.peak > this.options.maxTokens) {
      this.over = true;
      if (Number.isFinite(nowMs)) this.overSinceMs = nowMs;
      return this.event("warn");
    }
    return this.tick(nowMs);
  }

  /** The driver's timer: the stop, once, when the grace has run out in enforce mode; else null. */
  tick(nowMs: number): BudgetEvent | null {
    if (this.stopped || !this.over || this.options.mode !== "enforce" || !Number.isFinite(nowMs)) return null;
    // A time that was no number when it went over: the grace starts at the first real one.
    this.overSinceMs ??= nowMs;
    if (nowMs - this.overSinceMs < this.options.graceMs) return null;
    this.stopped = true;
    return this.event("stop");
  }

  state(): BudgetState {
    return {
      weighted: this.peak,
      max: this.options.maxTokens,
      over: this.over,
      overSinceMs: this.overSinceMs,
      stopped: this.stopped,
    };
  }

  private event(kind: BudgetEvent["kind"]): BudgetEvent {
    return { kind, weighted: this.peak, max: this.options.maxTokens };
  }
}

export type ParsedBudget = { ok: true; options: BudgetOptions | null } | { ok: false; error: string };

const shown = (value: string): string => clean(value, 40);
const INTEGER = /^\d+$/;
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * The budget flags, checked. `options` is null when `--max-tokens` is absent
 * (the guard is off); the other flags then are an error, not silently ignored.
 * Pass absent flags as undefined (no citty defaults). An empty string counts as absent.
 */
export function parseBudgetOptions(flags: BudgetFlags): ParsedBudget {
  const given = (v: string | undefined): v is string => v !== undefined && v.trim() !== "";
  const { maxTokens, budget, cacheReadWeight, budgetGrace } = flags;
  if (!given(maxTokens)) {
    const stray = given(budget)
      ? "--budget"
      : given(cacheReadWeight)
        ? "--cache-read-weight"
        : given(budgetGrace)
          ? "--budget-grace"
          : null;
    return stray === null ? { ok: true, options: null } : { ok: false, error: `${stray} needs --max-tokens` };
  }
  const max = Number(maxTokens.trim());
  if (!INTEGER.test(maxTokens.trim()) || !Number.isSafeInteger(max) || max <= 0) {
    return { ok: false, error: `--max-tokens must be a positive integer, got "${shown(maxTokens)}"` };
  }
  let mode: BudgetMode = DEFAULT_BUDGET_MODE;
  if (given(budget)) {
    const m = budget.trim().toLowerCase();
    if (m !== "warn" && m !== "enforce") return { ok: false, error: `--budget must be warn or enforce, got "${shown(budget)}"` };
    mode = m;
  }
  let weight = DEFAULT_CACHE_READ_WEIGHT;
  if (given(cacheReadWeight)) {
    weight = Number(cacheReadWeight.trim());
    if (!DECIMAL.test(cacheReadWeight.trim()) || !Number.isFinite(weight) || weight < 0 || weight > 1) {
      return { ok: false, error: `--cache-read-weight must be a number from 0 to 1, got "${shown(cacheReadWeight)}"` };
    }
  }
  let graceMs = DEFAULT_BUDGET_GRACE_MS;
  if (given(budgetGrace)) {
    const s = Number(budgetGrace.trim());
    if (!DECIMAL.test(budgetGrace.trim()) || !Number.isFinite(s) || s < 0) {
      return { ok: false, error: `--budget-grace must be a number of seconds (0 or more), got "${shown(budgetGrace)}"` };
    }
    graceMs = Math.round(s * 1000);
  }
  const parsed = BudgetOptionsSchema.safeParse({ maxTokens: max, mode, cacheReadWeight: weight, graceMs });
  if (!parsed.success) return { ok: false, error: `budget options: ${clean(parsed.error.issues[0]?.message, 160)}` };
  return { ok: true, options: parsed.data };
}
