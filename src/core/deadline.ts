// The agent knows its deadline: with a timeout, AGENTPORT_DEADLINE (RFC 3339,
// UTC, whole seconds, never later than the real one) in its environment, and
// with --tell-deadline one line for its appended system prompt. Pure.

export const DEADLINE_ENV = "AGENTPORT_DEADLINE";

/** The deadline of a phase that starts at `startMs` with `timeoutMs`, as RFC 3339 UTC. */
export function deadlineStamp(startMs: number, timeoutMs: number): string {
  return new Date(Math.floor((startMs + timeoutMs) / 1000) * 1000).toISOString().replace(/\.000Z$/, "Z");
}

/** The line --tell-deadline appends to the agent's system prompt. */
export function deadlineLine(timeoutMs: number): string {
  const minutes = Math.floor(timeoutMs / 60_000);
  const span = minutes >= 1 ? `${minutes} minute${minutes === 1 ? "" : "s"}` : `${Math.floor(timeoutMs / 1000)} seconds`;
  return `You have ${span}; save your work before then.`;
}

/** Why the wrap-up was told: the timeout is near, or an enforced token budget went over (its --budget-grace runs). */
export type WrapUpReason = "timeout" | "budget";

/** What --grace tells a running agent (an agent that takes a message while it runs). */
export const WRAP_UP: Readonly<Record<WrapUpReason, string>> = {
  timeout: "Time is nearly up: finish now, save your work and report.",
  budget: "Your token budget is spent: finish now, save your work and report.",
};
