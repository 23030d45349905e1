// What a batch came to, as a value: the CLI turns it into an exit code here,
// in one place. Pure.
import { EXIT } from "../core/exit.ts";
import type { Verdict } from "../core/verdict.ts";
import type { Refused } from "./check.ts";
import type { Harvest } from "./harvest.ts";

/** Why a batch (or the turn that stopped it) failed: each kind has its exit code. */
export type Cause = "failed" | "environment" | "supervision" | "interrupted" | "refused";

export type BatchEnd =
  /** A green arm is proposed (and, with --apply, applied: see `applied`). */
  | { kind: "winner"; arm: number }
  /** Every arm ran; none is green. */
  | { kind: "no_green" }
  /** The prime failed, a workspace or a clone could not be made: no later arm started. */
  | { kind: "stopped"; cause: Cause; reason: string }
  | { kind: "interrupted" };

export type Applied = { ok: true } | { ok: false; reason: string };

export type BonResult =
  /** The check refused, zero tokens, nothing written. */
  { kind: "refused"; refused: Refused } | { kind: "ran"; end: BatchEnd; harvest: Harvest; harvestFile: string; applied: Applied | null };

/** The cause a turn that did not end well stands for. */
export function causeOfVerdict(v: Pick<Verdict, "status" | "env_fault">): Cause {
  switch (v.status) {
    case "timeout":
    case "stalled":
    case "over_budget":
    case "looping":
      return "supervision";
    case "aborted":
      return "interrupted";
    case "refused":
      return "refused";
    default:
      return v.env_fault ? "environment" : "failed";
  }
}

const CAUSE_EXIT: Record<Cause, number> = {
  failed: EXIT.failed,
  environment: EXIT.environment,
  supervision: EXIT.supervision,
  interrupted: EXIT.interrupted,
  refused: EXIT.refused,
};

export function exitCodeOf(result: BonResult): number {
  if (result.kind === "refused") return EXIT.refused;
  // Whatever the arms came to: the user must look at the checkout first.
  const { checkout } = result.harvest;
  if (!checkout.checked || checkout.changed.length > 0) return EXIT.checkout_changed;
  switch (result.end.kind) {
    case "winner":
      return result.applied?.ok === false ? EXIT.failed : EXIT.ok;
    case "no_green":
      return EXIT.failed;
    case "stopped":
      return CAUSE_EXIT[result.end.cause];
    case "interrupted":
      return EXIT.interrupted;
  }
}
