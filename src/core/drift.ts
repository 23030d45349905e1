// Version drift: the agent versions agentport was tested with, and what a
// reducer says when the records it depends on never came but record types it
// does not know did (the shape of a renamed event), or a field it reads moved.
// Pure.
import type { AgentName } from "./agents.ts";
import { TESTED, versionFit } from "./readiness.ts";
import { clean } from "./text.ts";

/** Whether `version` is inside the tested range of `agent` (readiness.ts TESTED, the one table); false when it is unknown. */
export function versionTested(agent: AgentName, version: string | null): boolean {
  return versionFit(TESTED[agent], version ?? undefined) === "tested";
}

const MAX_TYPES = 8;

/** The unknown record types a stream carried, the first few by name. */
export class UnknownTypes {
  private readonly names = new Set<string>();
  add(type: unknown): void {
    const name = typeof type === "string" ? clean(type, 60) : typeof type;
    if (this.names.size < MAX_TYPES) this.names.add(name || "(empty)");
  }
  list(): string[] {
    return [...this.names];
  }
}

export interface Drift {
  /** Record types the reducer does not know, seen in the stream. */
  unknown: string[];
  /** What it depends on and never got: a record type, or a record's field ("turn.completed.usage"). */
  missing: string[];
}

/** Drift, when a needed record is missing while unknown types came, or a needed field is missing; else undefined. */
export function driftOf(unknown: UnknownTypes, missingRecords: string[], missingFields: string[] = []): Drift | undefined {
  const types = unknown.list();
  const missing = [...(types.length > 0 ? missingRecords : []), ...missingFields];
  return missing.length === 0 ? undefined : { unknown: types, missing };
}
