// Trusting a project config, as direnv (`allow`) and mise (`trust`) do: an
// agentport.json found by the upward search is the folder's, not the user's;
// it can grant tools, pick models and name gates that `bon` runs with `sh -c`.
// It applies only once `agentport trust [FILE]` recorded its path and sha256,
// and only while the file still has that sha256. A file the user named
// (--config FILE, $AGENTPORT_CONFIG) is trusted as it is.
import { createHash } from "node:crypto";
import type { ConfigOrigin } from "./load.ts";

/** explicit: named by --config or $AGENTPORT_CONFIG; trusted: found and recorded; untrusted: never recorded; changed: recorded with another sha256. */
export type TrustState = "explicit" | "trusted" | "untrusted" | "changed";

/** Where trust is recorded (the ledger): the sha256 recorded for a path, or null. */
export interface TrustRecords {
  trustedSha256(path: string): string | null;
}

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export function trustState(origin: ConfigOrigin, path: string, hash: string, records: TrustRecords | null): TrustState {
  if (origin !== "found") return "explicit";
  const recorded = records?.trustedSha256(path) ?? null;
  if (recorded === null) return "untrusted";
  return recorded === hash ? "trusted" : "changed";
}

/** The one line that says why a found config is not used. */
export function ignoredLine(path: string, state: Exclude<TrustState, "explicit" | "trusted">): string {
  return state === "changed"
    ? `ignoring ${path}: it changed since it was trusted; run \`agentport trust\` to use it`
    : `ignoring untrusted agentport.json at ${path}: run \`agentport trust\` to use it`;
}
