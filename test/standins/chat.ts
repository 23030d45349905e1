// What a stand-in model reads from a chat-completions request: the last user
// message's text, and how many assistant steps followed it.
import type { RecordedRequest } from "./util.ts";

type Json = Record<string, any>;

/** A message's text, whether its content is a string or a list of parts. */
export const text = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.map((c: Json) => c.text ?? "").join("") : "";

/** The request's messages, the last user message's text (`ask`), and the assistant steps since it. */
export function chatOf(req: RecordedRequest): { messages: Json[]; ask: string; step: number } {
  const messages = req.messages as Json[];
  const lastUser = messages.findLastIndex((m) => m.role === "user");
  return {
    messages,
    ask: text(messages[lastUser]?.content),
    step: messages.slice(lastUser + 1).filter((m) => m.role === "assistant").length,
  };
}
