// One claude `result` record read on its own: the facts the summary keeps,
// and what it says of its turn. `is_error` is checked first (an API failure
// is `subtype:"success"` with `is_error:true`), then `subtype` must be
// `success`, then `result` must be a string. Error subtypes carry `errors[]`
// instead of `result`, and those become the failure reason.
import type { FailureKind } from "../failure.ts";
import { count } from "../numbers.ts";
import { MAX_VALUE_CHARS, type Summary } from "../reduction.ts";
import { clean } from "../text.ts";
import type { ClaudeResult } from "./events.ts";

/** claude's own limits (--max-turns, --max-budget-usd), by result subtype. */
const CLAUDE_LIMITS: Readonly<Record<string, FailureKind>> = { error_max_turns: "turn_limit", error_max_budget_usd: "budget_limit" };

export type ResultOutcome =
  | { kind: "answer"; text: string }
  | { kind: "failed"; failure: FailureKind; reason: string }
  | { kind: "protocol"; what: string };

export interface ResultReading {
  /** result_subtype, is_error, terminal_reason and stop_reason, for the summary. */
  facts: Summary;
  apiStatus: number | undefined;
  stopReason: string | null;
  outcome: ResultOutcome;
}

export function readResult(record: ClaudeResult): ResultReading {
  const subtype = clean(record.subtype, MAX_VALUE_CHARS);
  const isError = record.is_error;
  const stopReason = clean(record.stop_reason, MAX_VALUE_CHARS) || null;
  const terminal = clean(record.terminal_reason, MAX_VALUE_CHARS);
  const facts: Summary = { result_subtype: subtype, is_error: isError === true, terminal_reason: terminal, stop_reason: stopReason ?? "" };
  const apiStatus = count(record.api_error_status);
  return { facts, apiStatus, stopReason, outcome: outcomeOf(record, subtype, terminal, apiStatus) };
}

function outcomeOf(record: ClaudeResult, subtype: string, terminal: string, apiStatus: number | undefined): ResultOutcome {
  const isError = record.is_error;
  if (isError === true) {
    const facts = [`subtype ${subtype || "-"}`];
    if (terminal) facts.push(`terminal_reason ${terminal}`);
    if (apiStatus !== undefined) facts.push(`api_error_status ${apiStatus}`);
    const excerpt = clean(record.result, MAX_VALUE_CHARS * 2) || errorsOf(record.errors);
    // An API failure keeps subtype "success"; the error subtypes are claude's own limits.
    const kind: FailureKind =
      subtype === "success" || apiStatus !== undefined
        ? "provider_error"
        : ((Object.hasOwn(CLAUDE_LIMITS, subtype) ? CLAUDE_LIMITS[subtype] : undefined) ?? "agent_error");
    return {
      kind: "failed",
      failure: kind,
      reason: `claude: the run ended in an error (${facts.join(", ")})${excerpt ? `: ${excerpt}` : ""}`,
    };
  }
  if (isError !== false) return { kind: "protocol", what: "the result event has no boolean 'is_error'" };
  if (subtype !== "success") {
    const errors = errorsOf(record.errors);
    return {
      kind: "failed",
      failure: "agent_error",
      reason: `claude: the run did not succeed (subtype ${subtype || "-"})${errors ? `: ${errors}` : ""}`,
    };
  }
  if (typeof record.result !== "string") return { kind: "protocol", what: "the result event has no string 'result'" };
  return { kind: "answer", text: record.result };
}

function errorsOf(value: unknown): string {
  if (!Array.isArray(value)) return "";
  return clean(
    value
      .filter((item) => typeof item === "string")
      .slice(0, 4)
      .join("; "),
    MAX_VALUE_CHARS * 2,
  );
}
