// The one failure of the opencode serve client (opencode-server.ts), typed by
// its code; its message through the redactor. A server that never came up is
// the environment's fault, a request it failed the agent's (errors.ts kinds).
import { AgentportError } from "../core/errors.ts";
import { secrets } from "../core/redact.ts";

export type OpencodeServerErrorKind = "not_found" | "cannot_start" | "start_timeout" | "exited" | "http" | "transport" | "protocol";

const START_CODES: readonly OpencodeServerErrorKind[] = ["not_found", "cannot_start", "start_timeout", "exited"];

export class OpencodeServerError extends AgentportError {
  constructor(
    readonly code: OpencodeServerErrorKind,
    message: string,
    /** The HTTP status, for kind `http`. */
    readonly status?: number,
    /** The request that failed (`POST /session`), for kinds http, transport and protocol. */
    readonly request?: string,
  ) {
    super(START_CODES.includes(code) ? "environment" : "agent", secrets.text(message), {
      faultKind: code === "not_found" ? "missing_binary" : code === "cannot_start" ? "cannot_start" : "environment",
    });
  }
}
