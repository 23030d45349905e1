// The one failure of the opencode serve client (opencode-server.ts), typed by
// its kind; its message through the redactor.
import { secrets } from "../core/redact.ts";

export type OpencodeServerErrorKind = "not_found" | "cannot_start" | "start_timeout" | "exited" | "http" | "transport" | "protocol";

export class OpencodeServerError extends Error {
  override readonly name = "OpencodeServerError";
  constructor(
    readonly kind: OpencodeServerErrorKind,
    message: string,
    /** The HTTP status, for kind `http`. */
    readonly status?: number,
    /** The request that failed (`POST /session`), for kinds http, transport and protocol. */
    readonly request?: string,
  ) {
    super(secrets.text(message));
  }
}
