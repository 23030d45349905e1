// Exit codes: part of the interface, documented in the README. Kept apart
// from the verdict's schemas so the entry point loads no zod to print one.
export const EXIT = {
  ok: 0,
  failed: 1,
  usage: 2,
  refused: 3,
  supervision: 4,
  environment: 5,
  /** bon: the user's checkout changed during the batch (or could not be checked). */
  checkout_changed: 6,
  /** A quota wall: the run was parked until its usage limit resets (sysexits EX_TEMPFAIL). */
  parked: 75,
  interrupted: 130,
} as const;
