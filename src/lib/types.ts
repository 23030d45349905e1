// The library's types, written out so its .d.ts stands alone (the core's
// are inferred from zod schemas, which the package does not ship). Each is
// checked both ways against the core's below: a field changed on one side
// and not the other fails the type check.
import type { AgentName as CoreAgentName } from "../core/agents.ts";
import type { FailureKind as CoreFailureKind, StopCause as CoreStopCause } from "../core/failure.ts";
import type { ProgressEvent as CoreProgressEvent, ProgressKind as CoreProgressKind } from "../core/progress.ts";
import type { Status as CoreStatus, Verdict as CoreVerdict } from "../core/verdict.ts";

export type AgentName = "claude" | "pi" | "codex" | "gemini" | "opencode" | "acp";
export type Status =
  | "completed"
  | "failed"
  | "timeout"
  | "stalled"
  | "crashed"
  | "over_budget"
  | "looping"
  | "aborted"
  | "refused"
  | "interrupted"
  | "parked";
export type StopCause = "timeout" | "stall" | "loop" | "budget" | "cost" | "turns" | "interrupt" | "wall";
/** Where a cost came from: the agent said it, tokens × a price, or not known (cost null, never 0). */
export type CostSource = "reported" | "derived" | "unknown";
export type FailureKind =
  | "no_result"
  | "protocol"
  | "envelope_missing"
  | "envelope_invalid"
  | "provider_error"
  | "agent_error"
  | "empty_answer"
  | "exited"
  | "stopped"
  | "refused"
  | "environment"
  | "extension_missing"
  | "model_mismatch"
  | "internal"
  | "turn_limit"
  | "token_limit"
  | "usage"
  | "refusals"
  | "budget_limit"
  | "no_change"
  | "missing_file";
export type ProgressKind =
  | "started"
  | "thinking"
  | "assistant_text"
  | "tool_started"
  | "tool_finished"
  | "tool_failed"
  | "provider_retry"
  | "activity";

export interface Tokens {
  input: number;
  output: number;
  cache_read: number;
  cache_write: number;
}

/** A run's outcome: what `agentport run --json` prints (README "The `--json` verdict"). */
export interface Verdict {
  /** The contract's version (1); a change that breaks a field bumps it. */
  schema_version: number;
  agent: AgentName;
  session_id: string | null;
  status: Status;
  /** status is "completed". */
  ok: boolean;
  /** The answer, when ok. */
  text: string | null;
  envelope: unknown;
  failure: { kind: FailureKind; message: string; cause?: StopCause } | null;
  stop_reason: string | null;
  cost_micro_usd: number | null;
  cost_source: CostSource;
  tokens: Tokens | null;
  refused: { kind: "permission" | "question" | "dialog"; subject: string }[];
  /** The failure points at the environment (auth, quota, network, a missing binary): exit 5. */
  env_fault: boolean;
  fault: { kind: string; evidence: string } | null;
  /** What the run changed in its folder (a git work tree; else null). */
  changes: { files: number; insertions: number; deletions: number } | null;
  /** A parked run: when its usage limit resets (RFC 3339); null otherwise. */
  resume_after: string | null;
  agent_version: string | null;
  /** Whether agent_version is inside the range agentport was tested with. */
  agent_version_tested: boolean;
  summary: Record<string, string | number | boolean>;
  /** A live run: whether the agent ran under bwrap (--isolate); absent from a replay. */
  isolated?: boolean;
}

/** What a reducer tells while a stream is read: bounded, cleaned, never tool output or assistant text. */
export interface ProgressEvent {
  kind: ProgressKind;
  tool?: string;
  detail?: string;
  thinking_tokens?: number;
  tokens?: Tokens | null;
  cost_micro_usd?: number | null;
}

/** One line of `--progress json` (schemas.progress): an event with its subject, a message, or the verdict's record. */
export type ProgressRecord = { schema_version: number; ts: string; session_id: string | null } & (
  | ({ agent: AgentName } & ProgressEvent)
  | { agent: AgentName | null; kind: "log"; level: string; message: string }
  | {
      agent: AgentName;
      kind: "verdict";
      status: Status;
      ok: boolean;
      cost_micro_usd: number | null;
      tokens: Tokens | null;
      exit_code: number;
    }
);

// Both ways, for each: the library's word and the core's are the same type.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const agree = <T extends true>(): T => true as T;
void agree<Same<AgentName, CoreAgentName>>();
void agree<Same<Status, CoreStatus>>();
void agree<Same<StopCause, CoreStopCause>>();
void agree<Same<FailureKind, CoreFailureKind>>();
void agree<Same<ProgressKind, CoreProgressKind>>();
void agree<Same<ProgressEvent, CoreProgressEvent>>();
void agree<Same<Verdict, Omit<CoreVerdict, "envelope"> & { envelope: unknown }>>();
