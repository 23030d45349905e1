// The failures a command turns into one line and an exit code (usage: 2, environment: 5).
import { EXIT } from "./exit.ts";
import type { Verdict } from "./verdict.ts";

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    /** What --json prints for it (a refused resume); else a pre-flight verdict is made from the message. */
    readonly verdict?: Verdict,
    /** The environment's fault, by kind (missing_binary, …), for that verdict. */
    readonly faultKind?: string,
  ) {
    super(message);
  }

  /** Its verdict is on stdout already (--json prints one object per exit, never two). */
  printed = false;
}

/** A failure after the verdict was printed (a verdict the ledger would not take). */
export function afterVerdict(error: CliError): CliError {
  error.printed = true;
  return error;
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.usage);
export const environmentError = (message: string, faultKind = "environment"): CliError => new CliError(message, EXIT.environment, undefined, faultKind);
