// Steps 4 and 10 of the verdict rule (judge.ts): what a run's envelope says:
// delivered and valid, missing, invalid, or only reported (none was required). Pure.
import { failure, type Failure } from "./failure.ts";
import type { Delivered, EnvelopeCheck } from "./envelope.ts";

export interface EnvelopeInput {
  /** The validator when an envelope is required; null when one is only reported (pi's tool, unasked). */
  check: ((value: unknown) => EnvelopeCheck) | null;
  /** What the run delivered: pi's report tool, claude's fenced block in its final text. */
  delivered: Delivered;
  /** Nudges already spent on this run, for the failure's words. */
  nudges: number;
}

export type EnvelopeVerdict = { ok: true; value: Record<string, unknown> | null } | { ok: false; failure: Failure };

export function envelopeOf(e: EnvelopeInput | null | undefined): EnvelopeVerdict {
  if (e === null || e === undefined) return { ok: true, value: null };
  const { check, delivered } = e;
  if (check === null) return { ok: true, value: delivered.found && isObject(delivered.value) ? delivered.value : null };
  const after = e.nudges > 0 ? ` after ${e.nudges} nudge${e.nudges === 1 ? "" : "s"}` : "";
  if (!delivered.found) {
    if (delivered.invalid) return { ok: false, failure: failure("envelope_invalid", `invalid envelope${after}: ${delivered.error}`) };
    return { ok: false, failure: failure("envelope_missing", `no envelope${after}: ${delivered.error}`) };
  }
  const checked = check(delivered.value);
  if (checked.ok) return { ok: true, value: checked.value };
  return { ok: false, failure: failure("envelope_invalid", `invalid envelope${after}: ${checked.error}`) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
