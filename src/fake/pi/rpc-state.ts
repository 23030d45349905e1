// What the fake pi's RPC state commands answer: the models (the agent dir's
// models.json, the start model, the scenario's), a session's stats, and the
// model and thinking level a session file was left with.
import { join } from "node:path";
import type { Json } from "../../core/record.ts";
import { API } from "./dialect.ts";
import { agentDir, readJson } from "./files.ts";
import type { SessionStore } from "./session-store.ts";

/** The fake's prices (USD per million tokens), as usageOf in stream.ts charges them. */
const FAKE_COST = { input: 1.5, output: 15, cacheRead: 0.15, cacheWrite: 1.875 };

/** A model as get_state and set_model show it: the agent dir's models.json entry when there is one. */
export function modelObject(provider: string, id: string, entry: Json = {}, baseUrl?: unknown): Json {
  return {
    id,
    name: typeof entry.name === "string" ? entry.name : id,
    api: API,
    provider,
    baseUrl: typeof baseUrl === "string" ? baseUrl : "http://127.0.0.1:0/v1",
    reasoning: entry.reasoning !== false,
    input: Array.isArray(entry.input) ? entry.input : ["text"],
    cost: entry.cost && typeof entry.cost === "object" ? entry.cost : FAKE_COST,
    contextWindow: typeof entry.contextWindow === "number" ? entry.contextWindow : 128000,
    maxTokens: typeof entry.maxTokens === "number" ? entry.maxTokens : 16384,
  };
}

export function availableModels(o: { startProvider: string; startModel: string; scenario: { models: string[] } }): Json[] {
  const list: Json[] = [];
  const has = (p: string, m: string) => list.some((x) => x.provider === p && x.id === m);
  const file = readJson(join(agentDir(), "models.json"));
  const providers = file.providers && typeof file.providers === "object" ? (file.providers as Record<string, Json>) : {};
  for (const [provider, p] of Object.entries(providers)) {
    for (const m of Array.isArray(p.models) ? (p.models as Json[]) : []) {
      if (typeof m.id === "string" && !has(provider, m.id)) list.push(modelObject(provider, m.id, m, p.baseUrl));
    }
  }
  for (const route of [`${o.startProvider}/${o.startModel}`, ...o.scenario.models]) {
    const slash = route.indexOf("/");
    const provider = route.slice(0, slash);
    const id = route.slice(slash + 1);
    if (!has(provider, id)) list.push(modelObject(provider, id));
  }
  return list;
}

/** pi's getSessionStats, over the session's message entries (a clone's copied history included). */
export function sessionStats(store: SessionStore, model: Json): Json {
  const messages = store.entries.filter((e) => e.type === "message").map((e) => (e.message ?? {}) as Json);
  let toolCalls = 0;
  const tokens = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 };
  let cost = 0;
  let lastTotal = 0;
  for (const m of messages) {
    if (m.role !== "assistant") continue;
    toolCalls += (Array.isArray(m.content) ? (m.content as Json[]) : []).filter((c) => c.type === "toolCall").length;
    const u = (m.usage ?? {}) as Json;
    tokens.input += Number(u.input ?? 0);
    tokens.output += Number(u.output ?? 0);
    tokens.cacheRead += Number(u.cacheRead ?? 0);
    tokens.cacheWrite += Number(u.cacheWrite ?? 0);
    cost += Number(((u.cost ?? {}) as Json).total ?? 0);
    if (Number(u.totalTokens ?? 0) > 0) lastTotal = Number(u.totalTokens);
  }
  tokens.total = tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite;
  const contextWindow = Number(model.contextWindow ?? 128000);
  return {
    sessionFile: store.persist ? store.file : undefined,
    sessionId: store.id,
    userMessages: messages.filter((m) => m.role === "user").length,
    assistantMessages: messages.filter((m) => m.role === "assistant").length,
    toolCalls,
    toolResults: messages.filter((m) => m.role === "toolResult").length,
    totalMessages: messages.length,
    tokens,
    cost,
    contextUsage: { tokens: lastTotal, contextWindow, percent: (lastTotal / contextWindow) * 100 },
  };
}

/** The model and thinking level a session file was left with (switch_session restores them). */
export function lastSettings(store: SessionStore): { provider?: string; model?: string; thinking?: string } {
  const found: { provider?: string; model?: string; thinking?: string } = {};
  for (const e of store.entries) {
    if (e.type === "model_change" && typeof e.provider === "string" && typeof e.modelId === "string") {
      found.provider = e.provider;
      found.model = e.modelId;
    } else if (e.type === "thinking_level_change" && typeof e.thinkingLevel === "string") found.thinking = e.thinkingLevel;
  }
  return found;
}
