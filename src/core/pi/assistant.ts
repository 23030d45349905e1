// One pi message_end read on its own: when it is the assistant's, its text,
// stop reason, error message, `provider/model` and usage, bounded. Pure.
import { MAX_VALUE_CHARS } from "../reduction.ts";
import type { Json } from "../record.ts";
import { clean } from "../text.ts";
import type { PiAssistantMessage } from "./events.ts";

export interface AssistantReading {
  /** The text blocks joined; "" when there are none. */
  text: string;
  stopReason: string | null;
  errorMessage: string | null;
  /** `provider/model`, or the model alone, or null when it names none. */
  model: string | null;
  usage: unknown;
}

/** message_end's `message`, read when its role is assistant; null for any other message. */
export function readAssistant(message: unknown): AssistantReading | null {
  if (message === null || typeof message !== "object") return null;
  const m = message as PiAssistantMessage;
  if (m.role !== "assistant") return null;
  const content = Array.isArray(m.content) ? m.content : [];
  const text = content
    .filter((b): b is Json => b !== null && typeof b === "object" && (b as Json).type === "text" && typeof (b as Json).text === "string")
    .map((b) => b.text as string)
    .join("");
  const provider = clean(m.provider, MAX_VALUE_CHARS);
  const model = clean(m.model, MAX_VALUE_CHARS);
  return {
    text,
    stopReason: clean(m.stopReason, MAX_VALUE_CHARS) || null,
    errorMessage: clean(m.errorMessage, MAX_VALUE_CHARS * 2) || null,
    model: model ? (provider ? `${provider}/${model}` : model) : null,
    usage: m.usage,
  };
}
