// Version drift: the agent versions agentport was tested with, and what a
// reducer says when the records it depends on never came but record types it
// does not know did (the shape of a renamed event), or a field it reads moved.
// Pure.
import type { AgentName } from "./agents.ts";
import { clean } from "./text.ts";

/** Inclusive ranges of the versions each agent was tested with (the e2e suites and the captured fixtures). */
export const TESTED_VERSIONS: Readonly<Record<AgentName, readonly { min: string; max: string }[]>> = {
  claude: [{ min: "2.1.197", max: "2.1.197" }],
  // 0.73.1 is the devDependency; the 0.85 dialect is captured in test/fixtures/pi.
  pi: [{ min: "0.73.1", max: "0.73.1" }, { min: "0.85.0", max: "0.85.99" }],
  codex: [{ min: "0.169.0", max: "0.169.0" }],
  gemini: [{ min: "0.61.0", max: "0.61.0" }],
  opencode: [{ min: "1.18.33", max: "1.18.33" }],
  // A protocol, not one agent: no version of its own (readiness.ts TESTED acp: null).
  acp: [],
};

function parts(version: string): number[] | null {
  const m = /(\d+)\.(\d+)\.(\d+)/.exec(version);
  return m === null ? null : [Number(m[1]), Number(m[2]), Number(m[3])];
}

function compare(a: number[], b: number[]): number {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
}

/** Whether `version` is inside a tested range of `agent`; false when it is unknown. */
export function versionTested(agent: AgentName, version: string | null): boolean {
  const v = version === null ? null : parts(version);
  if (v === null) return false;
  return TESTED_VERSIONS[agent].some((r) => compare(v, parts(r.min) ?? []) >= 0 && compare(v, parts(r.max) ?? []) <= 0);
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
