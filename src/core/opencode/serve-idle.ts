// What an opencode serve turn's idle session says of it: the session's error
// or its last message's (an API error is the provider's, any other the
// agent's), a cut stream, or a last step that is no answer. Pure.
import type { FailureKind } from "../failure.ts";
import { count } from "../numbers.ts";
import { MAX_TOOL_CHARS } from "../progress.ts";
import { MAX_VALUE_CHARS } from "../reduction.ts";
import type { Json } from "../record.ts";
import { clean } from "../text.ts";
import { type CutSteps, NOT_FINAL, objectOf } from "./common.ts";
import type { AssistantMessage } from "./serve-messages.ts";

export interface IdleFailure {
  message: string;
  kind: FailureKind;
  /** The error's name (`APIError`, `MessageAbortedError`), "" when no error was given. */
  errorName: string;
  /** The provider's HTTP status, when the error names one. */
  apiStatus: number | null;
}

/** The turn's failure once its session is idle, null when its last message is an answer. */
export function idleFailure(sessionError: Json | null, last: AssistantMessage | null, cut: CutSteps): IdleFailure | null {
  const error = sessionError ?? last?.error ?? null;
  if (error !== null) return errorFailure(error);
  const finish = last?.finish ?? "";
  if (finish === "unknown") return noError(`opencode serve: ${cut.describe()}`, "provider_error");
  if (last === null) return noError("opencode serve: the session went idle without an answer", "no_result");
  if (finish === "" || NOT_FINAL.has(finish))
    return noError(
      `opencode serve: the session went idle after ${finish ? `a step ending in ${finish}` : "an unfinished step"}, without an answer`,
      "no_result",
    );
  return null;
}

const noError = (message: string, kind: FailureKind): IdleFailure => ({ message, kind, errorName: "", apiStatus: null });

function errorFailure(error: Json): IdleFailure {
  const data = objectOf(error.data);
  const errorName = clean(error.name, MAX_TOOL_CHARS);
  const message = clean(data.message, MAX_VALUE_CHARS * 3);
  // An API error is the provider's; anything else (an abort, opencode's own trouble) is the agent's.
  const kind: FailureKind = errorName === "APIError" ? "provider_error" : "agent_error";
  return {
    message: `opencode serve: ${errorName || "error"}${message ? `: ${message}` : ""}`,
    kind,
    errorName,
    apiStatus: count(data.statusCode) ?? null,
  };
}
