// A replay has no process: no exit code, no signal, no stderr.
import type { ProcessOutcome } from "../core/outcome.ts";

export const NO_PROCESS: ProcessOutcome = { exitCode: null, signal: null, stoppedBy: null, stderrTail: "" };
