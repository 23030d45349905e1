// A loopback stand-in of the Anthropic Messages streaming API, for running the real Claude Code offline.
//   POST /v1/messages[?beta=true]  (stream:true) -> SSE message_start, content_block_start/delta/stop,
//                                                   message_delta (stop_reason, usage.output_tokens), message_stop
//   HEAD /  -> 200 (claude preconnects)
// Replies come from a script (see ./util.ts `Reply`); requests beyond a list repeat its last reply.
import { mkdirSync } from "node:fs";
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
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  529: "overloaded_error",
};

function errorResponse(reply: ErrorReply, requestId: string): Response {
  const body =
    typeof reply.body === "object" && reply.body !== null
      ? reply.body
      : {
          type: "error",
          error: { type: ERROR_TYPES[reply.status] ?? "api_error", message: reply.body ?? `standin error ${reply.status}` },
        };
  const headers: Record<string, string> = { "content-type": "application/json", "request-id": requestId };
  if (reply.retryAfter !== undefined) headers["retry-after"] = String(reply.retryAfter);
  return new Response(JSON.stringify(body), { status: reply.status, headers: { ...headers, ...reply.headers } });
}

function streamReply(reply: Exclude<Reply, ErrorReply>, req: RecordedRequest, n: number, requestId: string): Response {
  const id = `msg_standin_${String(n).padStart(4, "0")}`;
  const model = typeof req.model === "string" ? req.model : "claude-standin";
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const input = reply.usage?.input ?? estimateTokens(JSON.stringify([req.system ?? "", req.messages ?? []]));
  const out: string[] = [
    ev("message_start", {
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: input,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 1,
          service_tier: "standard",
        },
      },
    }),
    ev("ping", {}),
  ];
  let index = 0;
  let completionText = "";
  if (reply.text) {
    completionText += reply.text;
    out.push(ev("content_block_start", { index, content_block: { type: "text", text: "" } }));
    for (const part of splitDeltas(reply.text)) out.push(ev("content_block_delta", { index, delta: { type: "text_delta", text: part } }));
    out.push(ev("content_block_stop", { index }));
    index++;
  }
  let stopReason = "end_turn";
  if ("toolCall" in reply) {
    const call = reply.toolCall;
    const args = JSON.stringify(call.arguments);
    completionText += call.name + args;
    out.push(
      ev("content_block_start", {
        index,
        content_block: { type: "tool_use", id: call.id ?? `toolu_standin_${String(n).padStart(4, "0")}`, name: call.name, input: {} },
      }),
    );
    for (const part of splitDeltas(args))
      out.push(ev("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } }));
    out.push(ev("content_block_stop", { index }));
    stopReason = "tool_use";
  }
  const output = reply.usage?.output ?? estimateTokens(completionText);
  out.push(ev("message_delta", { delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: output } }));
  out.push(ev("message_stop", {}));
  return sseResponse(out, reply.chunkDelayMs ?? 0, { "request-id": requestId });
}

/** Start the stand-in on 127.0.0.1 and an ephemeral port. Its `url` has no /v1 (that is what ANTHROPIC_BASE_URL wants). */
export function startAnthropicStandin(script: Script): Standin {
  return startStandin({
    route: postTo("/v1/messages"),
    script,
    error: errorResponse,
    reply: (reply, req, n, _route, requestId) => streamReply(reply, req, n, requestId),
    basePath: "",
  });
}

/**
 * The env that runs Claude Code offline against the stand-in at `url` (a trailing /v1 is dropped):
 * a temp HOME and CLAUDE_CONFIG_DIR under `dir`, a dummy key, every phone-home switch off, and
 * CLAUDE_CODE_MAX_RETRIES=2 (500 ms then ~1 s backoff, so an always-failing call ends in ~2 s).
 */
export function claudeEnv(dir: string, url: string): Record<string, string> {
  const home = join(dir, "home");
  const config = join(dir, "claude-config");
  mkdirSync(home, { recursive: true });
  mkdirSync(config, { recursive: true });
  return {
    PATH: basePath(),
    HOME: home,
    CLAUDE_CONFIG_DIR: config,
    ANTHROPIC_BASE_URL: url.replace(/\/+$/, "").replace(/\/v1$/, ""),
    ANTHROPIC_API_KEY: "sk-ant-standin-dummy",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_INSTALLATION_CHECKS: "1",
    DISABLE_GROWTHBOOK: "1",
    CLAUDE_CODE_MAX_RETRIES: "2",
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    NO_COLOR: "1",
    TERM: "dumb",
  };
}
