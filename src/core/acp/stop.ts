// How an ACP prompt ends, as agentport's failures: the response's stopReason
// (end_turn completes; `cancelled` only after agentport's own session/cancel)
// and a JSON-RPC error's code and words. Pure.
import type { FailureKind } from "../failure.ts";
import { objectOf } from "../record.ts";
import { MAX_VALUE_CHARS } from "../reduction.ts";
import { clean } from "../text.ts";

const STOP_FAILURES: Readonly<Record<string, { kind: FailureKind; why: string }>> = {
  max_tokens: { kind: "token_limit", why: "the model reached its output token limit" },
  max_turn_requests: { kind: "turn_limit", why: "the agent reached its limit of model requests in one turn" },
  refusal: { kind: "agent_error", why: "the agent refused to go on" },
};

/** The failure a stopReason means, else null (end_turn; cancelled when agentport asked). */
export function stopFailure(reason: string, cancelSent: boolean): { kind: FailureKind; message: string } | null {
  if (reason === "end_turn" || (reason === "cancelled" && cancelSent)) return null;
  if (reason === "cancelled")
    return { kind: "agent_error", message: "acp: the agent cancelled the prompt though agentport did not ask it to" };
  const known = STOP_FAILURES[reason];
  return known
    ? { kind: known.kind, message: `acp: ${known.why} (stopReason ${reason})` }
    : { kind: "protocol", message: `acp: protocol violation: unknown stopReason "${reason}"` };
}

/** A JSON-RPC error's code (0 when none) and its words, with gemini's `data.details` or opencode's `data.message`. */
export function rpcErrorOf(error: Record<string, unknown>): { code: number; what: string } {
  const code = typeof error.code === "number" && Number.isSafeInteger(error.code) ? error.code : 0;
  const data = objectOf(error.data);
  const detail = clean(data?.details ?? data?.message, MAX_VALUE_CHARS);
  return { code, what: `${clean(error.message, MAX_VALUE_CHARS * 2)}${detail ? ` (${detail})` : ""}` };
}
