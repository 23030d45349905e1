// Progress events: what a reducer may tell the outside world while a run goes on.
// Only these fields exist, and every string in them is bounded and cleaned by
// the reducer that made it: never a command line, a tool result, thinking or
// assistant text.

export const PROGRESS_KINDS = [
  "started",
  "thinking",
  "assistant_text",
  "tool_started",
  "tool_finished",
  "tool_failed",
  "provider_retry",
  "activity",
] as const;

export type ProgressKind = (typeof PROGRESS_KINDS)[number];

export interface ProgressEvent {
  kind: ProgressKind;
  /** The tool's name, for tool events. */
  tool?: string;
  /** One allow-listed detail: a model name, a relative path, a pattern, a Bash description, "attempt 2 of 10". */
  detail?: string;
  /** Estimated thinking tokens so far, for thinking events. */
  tokens?: number;
}

export type ProgressSink = (event: ProgressEvent) => void;

/** Tool names, details and refused subjects are cut to these sizes. */
export const MAX_TOOL_CHARS = 64;
export const MAX_DETAIL_CHARS = 120;

/** Who a progress record is about. */
export interface ProgressSubject {
  sessionId: string;
  agent: string;
}

/** A progress event as it is written (progress.ndjson, `--progress json`): when, whose, then the event. */
export function progressRecord(event: ProgressEvent, subject: ProgressSubject, now: Date = new Date()): Record<string, unknown> {
  return { ts: now.toISOString(), session_id: subject.sessionId, agent: subject.agent, ...event };
}
