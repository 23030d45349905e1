// A loopback stand-in of the OpenAI chat-completions streaming API, for running the real pi offline.
//   POST /v1/chat/completions  (stream:true) -> SSE `data: {chunk}` lines, then `data: [DONE]`
// Replies come from a script (see ./util.ts `Reply`); requests beyond a list repeat its last reply.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  basePath,
  estimateTokens,
  postTo,
  splitDeltas,
  sseResponse,
  startStandin,
  type ErrorReply,
  type RecordedRequest,
  type Reply,
  type Script,
  type Standin,
} from "./util.ts";

export type { Reply, RecordedRequest, Standin } from "./util.ts";

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_request_error",
  404: "not_found_error",
  429: "rate_limit_exceeded",
  500: "server_error",
  503: "server_error",
};

function errorResponse(reply: ErrorReply): Response {
  const body =
    typeof reply.body === "object" && reply.body !== null
      ? reply.body
      : {
          error: {
            message: reply.body ?? `standin error ${reply.status}`,
            type: ERROR_TYPES[reply.status] ?? "server_error",
            param: null,
            code: null,
          },
        };
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (reply.retryAfter !== undefined) headers["retry-after"] = String(reply.retryAfter);
  return new Response(JSON.stringify(body), { status: reply.status, headers });
}

function streamReply(reply: Exclude<Reply, ErrorReply>, req: RecordedRequest, n: number): Response {
  const id = `chatcmpl-standin-${n}`;
  const created = Math.floor(Date.now() / 1000);
  const model = typeof req.model === "string" ? req.model : "standin-model";
  const chunk = (choices: unknown[], extra: object = {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`;
  const delta = (d: object, finish: string | null = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);

  const text = reply.text ?? "";
  const out: string[] = [delta({ role: "assistant", content: "" })];
  for (const part of splitDeltas(text)) out.push(delta({ content: part }));
  if ("cut" in reply && reply.cut) return sseResponse(out, reply.chunkDelayMs ?? 0);
  let finish = "stop";
  let completionText = text;
  if ("toolCall" in reply) {
    const call = reply.toolCall;
    const args = JSON.stringify(call.arguments);
    completionText += call.name + args;
    out.push(
      delta({
        tool_calls: [{ index: 0, id: call.id ?? `call_standin_${n}`, type: "function", function: { name: call.name, arguments: "" } }],
      }),
    );
    for (const part of splitDeltas(args)) out.push(delta({ tool_calls: [{ index: 0, function: { arguments: part } }] }));
    finish = "tool_calls";
  }
  out.push(delta({}, finish));
  const prompt = reply.usage?.input ?? estimateTokens(JSON.stringify(req.messages ?? req));
  const completion = reply.usage?.output ?? estimateTokens(completionText);
  out.push(chunk([], { usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion } }));
  out.push("data: [DONE]\n\n");
  return sseResponse(out, reply.chunkDelayMs ?? 0);
}

/** Start the stand-in on 127.0.0.1 and an ephemeral port. */
export function startOpenAIStandin(script: Script): Standin {
  return startStandin({
    route: postTo("/v1/chat/completions"),
    script,
    error: errorResponse,
    reply: (reply, req, n) => streamReply(reply, req, n),
    basePath: "/v1",
  });
}

/** The models.json cost of `standin/standin-model`, in USD per million tokens. */
export const STANDIN_COST = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };

/**
 * Write `<dir>/agent/models.json` (provider `standin` -> `standinUrl`) and `<dir>/agent/settings.json`
 * (fast retries: 2 pi-level retries 50 ms then 100 ms apart; the OpenAI SDK's own retries off), make
 * a temp HOME, and return the env that runs pi offline against the stand-in. Pass
 * `--model standin/standin-model`. Nothing else is inherited: add PATH (node) yourself, or use the
 * returned PATH.
 */
export function piEnv(dir: string, standinUrl: string): Record<string, string> {
  const agentDir = join(dir, "agent");
  const home = join(dir, "home");
  mkdirSync(join(agentDir, "sessions"), { recursive: true });
  mkdirSync(home, { recursive: true });
  const models = {
    providers: {
      standin: {
        baseUrl: standinUrl,
        api: "openai-completions",
        apiKey: "x",
        compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
        models: [
          {
            id: "standin-model",
            name: "Stand-in model",
            reasoning: false,
            input: ["text"],
            cost: STANDIN_COST,
            contextWindow: 128000,
            maxTokens: 4096,
          },
        ],
      },
    },
  };
  writeFileSync(join(agentDir, "models.json"), JSON.stringify(models, null, 2) + "\n");
  // Keys from pi 0.73.1 dist/core/settings-manager.js getRetrySettings/getProviderRetrySettings:
  // retry.{enabled,maxRetries,baseDelayMs} drive pi's auto-retry (delay = baseDelayMs * 2^(n-1));
  // retry.provider.maxRetries is handed to the OpenAI SDK as `maxRetries` (default 2 per attempt).
  const settings = {
    retry: { enabled: true, maxRetries: 2, baseDelayMs: 50, provider: { maxRetries: 0, maxRetryDelayMs: 1000 } },
    enableInstallTelemetry: false,
  };
  writeFileSync(join(agentDir, "settings.json"), JSON.stringify(settings, null, 2) + "\n");
  return {
    PATH: basePath(),
    HOME: home,
    PI_CODING_AGENT_DIR: agentDir,
    PI_OFFLINE: "1",
    PI_SKIP_VERSION_CHECK: "1",
    PI_TELEMETRY: "0",
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    NO_COLOR: "1",
    TERM: "dumb",
  };
}
