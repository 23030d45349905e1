// agentport's one error type: a failure a command turns into one line and an
// exit code. What it is, is its `kind`; its exit code comes from one table,
// EXIT_OF_KIND (README "Exit codes"). Decisions switch on the kind, never on
// a name or a message.
import { EXIT } from "./exit.ts";
import type { Verdict } from "./verdict.ts";

export type ErrorKind =
  /** The user's input: a flag, a value, an argument. */
  | "usage"
  /** A file the user named: missing, no regular file, past its bound. */
  | "named_file"
  /** Refused before anything ran (a resume of a busy session, a cancel agentport cannot prove). */
  | "refused"
  /** A wait stopped by its bound (tasks --wait). */
  | "supervision"
  /** The machine's fault: a missing binary, a closed stdout, an unwritable home. */
  | "environment"
  /** A symlink planted where agentport's own folder should be. */
  | "planted_link"
  /** The ledger could not be reached past its retries. */
  | "ledger_unreachable"
  /** The ledger file is damaged (SQLite: corrupt, not a database, an I/O error). */
  | "ledger_damaged"
  /** A verdict printed but not recorded (a full disk). */
  | "unrecorded_verdict"
  /** The agent's process or protocol failed outside a run's verdict (a pi RPC command, an opencode server's request). */
  | "agent"
  /** Ctrl-C, a cancel while waiting. */
  | "interrupted"
  /** A bug of agentport's: said as one, with where to report it. */
  | "internal";

/** Each kind's exit code: the one table. */
export const EXIT_OF_KIND: Record<ErrorKind, number> = {
  usage: EXIT.usage,
  named_file: EXIT.usage,
  refused: EXIT.refused,
  supervision: EXIT.supervision,
  environment: EXIT.environment,
  planted_link: EXIT.environment,
  ledger_unreachable: EXIT.environment,
  ledger_damaged: EXIT.environment,
  unrecorded_verdict: EXIT.environment,
  agent: EXIT.failed,
  interrupted: EXIT.interrupted,
  internal: EXIT.failed,
};

export interface ErrorDetails {
  /** What --json prints for it (a refused resume); else a pre-flight verdict is made from the message. */
  verdict?: Verdict;
  /** The environment's fault, by kind (missing_binary, …), for that verdict. */
  faultKind?: string;
  cause?: unknown;
}

export class AgentportError extends Error {
  readonly verdict?: Verdict;
  readonly faultKind?: string;
  /** Its verdict is on stdout already (--json prints one object per exit, never two). */
  printed = false;

  constructor(
    readonly kind: ErrorKind,
    message: string,
    details: ErrorDetails = {},
  ) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.verdict = details.verdict;
    this.faultKind = details.faultKind;
  }

  get exitCode(): number {
    return EXIT_OF_KIND[this.kind];
  }
}

/** A failure after the verdict was printed (a verdict the ledger would not take). */
export function afterVerdict(error: AgentportError): AgentportError {
  error.printed = true;
  return error;
}

export const usageError = (message: string): AgentportError => new AgentportError("usage", message);
export const environmentError = (message: string, faultKind = "environment"): AgentportError =>
  new AgentportError("environment", message, { faultKind });
