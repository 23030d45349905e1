// What a resume takes from the session's birth: its request, as the
// resolver's "session" layer, and its environment profile (an imported
// request only when the user accepts it).
import type { FlagRecord } from "../../config/resolve.ts";
import type { SessionRow } from "../../io/ledger.ts";
import { log } from "../output.ts";

/** What a resume takes from the session's birth: its request, as the resolver's "session" layer, and its environment profile. */
export interface Birth {
  request: FlagRecord;
  profile: string[] | undefined;
  /** An imported request left out: nothing of it applies. */
  imported: boolean;
}

/**
 * The request a session was born with; older rows know only their model. An
 * imported row's request is someone else's data: taken only when the user
 * accepts it, else nothing of it applies (one line says so).
 */
export function birthOf(row: SessionRow | null, acceptImported: boolean): Birth {
  if (row === null) return { request: {}, profile: undefined, imported: false };
  if (row.imported_at !== null && !acceptImported) {
    log.warn(
      `session ${row.id} was imported (${row.imported_at}): its request (model, permission mode, system prompt, pass-through) is not used, only the flags given now; ` +
        `read it with \`agentport show ${row.id}\` and pass --accept-imported-request to resume with it`,
    );
    return { request: {}, profile: undefined, imported: true };
  }
  const profile = row.profile ? row.profile.split(",").filter(Boolean) : undefined;
  if (row.request) {
    try {
      const request: unknown = JSON.parse(row.request);
      if (request !== null && typeof request === "object" && !Array.isArray(request))
        return { request: request as FlagRecord, profile, imported: false };
    } catch {
      // An unreadable request is no request: the model is still known.
    }
  }
  return { request: row.model ? { model: row.model } : {}, profile, imported: false };
}
