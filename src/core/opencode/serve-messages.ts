// The assistant messages of an opencode serve turn, from their
// `message.updated` events: one message a step, updated in place (tokens,
// cost and `finish` arrive with its last update), so only the last update of
// each counts. Messages come one after another: a new id makes the previous
// one final and adds it to the totals. Pure.
import { addCapped, microUsd } from "../numbers.ts";
import type { Json } from "../record.ts";
import { MAX_VALUE_CHARS } from "../reduction.ts";
import { clean } from "../text.ts";
import type { Usage } from "../usage.ts";
import type { Tokens } from "../verdict.ts";
import { addOpencodeTokens, objectOf, ZERO_TOKENS } from "./common.ts";

/** The last assistant message as its latest update has it. */
export interface AssistantMessage {
  id: string;
  tokens: Tokens | null;
  reasoning: number;
  cost: number | undefined;
  /** opencode's finish reason (`stop`, `tool-calls`, `unknown`), "" while it runs. */
  finish: string;
  /** The message's `error` (`APIError`, `MessageAbortedError`), else null. */
  error: Json | null;
}

/** The messages' usage, with the reasoning tokens (already counted as output) apart. */
export interface MessagesUsage extends Usage {
  reasoning: number;
}

const addTokens = (a: Tokens, b: Tokens): Tokens => ({
  input: addCapped(a.input, b.input),
  output: addCapped(a.output, b.output),
  cache_read: addCapped(a.cache_read, b.cache_read),
  cache_write: addCapped(a.cache_write, b.cache_write),
});

export class AssistantMessages {
  /** The messages before the last one, summed. */
  private before: MessagesUsage = { tokens: null, reasoning: 0, costMicroUsd: null };
  private current: AssistantMessage | null = null;
  /** `provider/model` of the last message that named one. */
  model: string | null = null;

  get last(): AssistantMessage | null {
    return this.current;
  }

  /** An assistant `message.updated`'s `info`. */
  update(info: Json): void {
    const id = clean(info.id, MAX_VALUE_CHARS);
    if (this.current !== null && this.current.id !== id) this.before = this.totals();
    const added = addOpencodeTokens(null, info.tokens);
    const error = info.error !== undefined && info.error !== null ? objectOf(info.error) : null;
    this.current = {
      id,
      tokens: added?.tokens ?? null,
      reasoning: added?.reasoning ?? 0,
      cost: microUsd(info.cost),
      finish: clean(info.finish, 40),
      error,
    };
    const provider = clean(info.providerID, MAX_VALUE_CHARS);
    const model = clean(info.modelID, MAX_VALUE_CHARS);
    if (model) this.model = provider ? `${provider}/${model}` : model;
  }

  /** Every message so far, the last one as it stands. */
  totals(): MessagesUsage {
    const m = this.current;
    const b = this.before;
    if (m === null) return b;
    return {
      tokens: m.tokens === null ? b.tokens : addTokens(b.tokens ?? ZERO_TOKENS, m.tokens),
      reasoning: addCapped(b.reasoning, m.reasoning),
      costMicroUsd: m.cost === undefined ? b.costMicroUsd : addCapped(b.costMicroUsd ?? 0, m.cost),
    };
  }
}
