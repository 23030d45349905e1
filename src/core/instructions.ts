// What the model is told about the envelope, for every agent from here: the
// same words and the same schema whether it arrives as claude's appended
// system prompt or as pi's report tool description and appended system
// prompt. Pure.
import type { JsonSchema } from "./envelope.ts";

/** How an agent hands the envelope over: pi's report tool, or claude's fenced block in the final text. */
export type EnvelopeDelivery = { tool: string } | { fenced: true };

export function envelopeInstructions(schema: JsonSchema, delivery: EnvelopeDelivery): string {
  const how =
    "tool" in delivery
      ? `call the ${delivery.tool} tool exactly once, as your very last action, with the envelope as its arguments`
      : "end your final message with the envelope: one fenced ```json block holding one JSON object, and nothing after it";
  return [
    "This task ends with a structured report, the envelope: it is the deliverable, and a run that ends without a valid one fails.",
    `When the work is done, ${how}. Fill every required field truthfully; do not invent work that was not done.`,
    `The envelope must match this JSON Schema:\n${JSON.stringify(schema)}`,
  ].join("\n");
}

/** The user's own appended system prompt, then agentport's: both reach the model, the user's first. */
export function appendedSystemPrompt(user: string | undefined, ours: string | null): string | undefined {
  const parts = [user, ours ?? undefined].filter((p): p is string => p !== undefined && p.trim() !== "");
  return parts.length === 0 ? undefined : parts.join("\n\n");
}
