// How the fake pi ends early: an exit code, or pi's one-line failure (stderr, exit 1).
/** Thrown to end the fake with an exit code, after its message went to stderr. */
export class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** A failure pi reports on stderr with exit 1. */
export class PiFailure extends Error {}
