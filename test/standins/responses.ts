// A loopback stand-in of the OpenAI Responses API, for running the real codex offline.
//   POST /v1/responses (stream:true) -> SSE `event: response.* / data: {…}` records:
//   response.created, output_item.added/done (message or function_call), output_text.delta,
//   response.completed with usage.
// Replies come from a script (see ./util.ts `Reply`); requests beyond a list repeat its last reply.
// Beyond the shared replies: `{ hang: true }` sends response.created and then nothing.
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
  type Standin,
} from "./util.ts";

export type ResponsesReply = Reply | { hang: true };
export type ResponsesScript = ResponsesReply[] | ((req: RecordedRequest, n: number) => ResponsesReply);

const sse = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;

function errorResponse(reply: ErrorReply): Response {
  const message = typeof reply.body === "string" ? reply.body : `standin error ${reply.status}`;
  const body =
    typeof reply.body === "object" && reply.body !== null
      ? reply.body
      : { error: { message, type: reply.status === 401 ? "invalid_request_error" : "server_error", param: null, code: null } };
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (reply.retryAfter !== undefined) headers["retry-after"] = String(reply.retryAfter);
  return new Response(JSON.stringify(body), { status: reply.status, headers });
}

function streamReply(reply: Exclude<ResponsesReply, ErrorReply>, req: RecordedRequest, n: number): Response {
  const id = `resp_standin_${String(n).padStart(4, "0")}`;
  const model = typeof req.model === "string" ? req.model : "standin-model";
  const response = (status: string, extra: object = {}) => ({
    id,
    object: "response",
    created_at: Math.floor(Date.now() / 1000),
    status,
    model,
    output: [],
    ...extra,
  });
  const out = [sse("response.created", { response: response("in_progress") })];
  if ("hang" in reply) return sseResponse(out, 0, {}, true);
  const items: object[] = [];
  const text = reply.text ?? "";
  if (text) {
    const msgId = `msg_standin_${n}`;
    out.push(
      sse("response.output_item.added", {
        output_index: items.length,
        item: { type: "message", id: msgId, status: "in_progress", role: "assistant", content: [] },
      }),
    );
    for (const part of splitDeltas(text))
      out.push(sse("response.output_text.delta", { item_id: msgId, output_index: items.length, content_index: 0, delta: part }));
    const item = {
      type: "message",
      id: msgId,
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text, annotations: [] }],
    };
    out.push(sse("response.output_item.done", { output_index: items.length, item }));
    items.push(item);
  }
  if ("toolCall" in reply) {
    const call = reply.toolCall;
    const item = {
      type: "function_call",
      id: `fc_standin_${n}`,
      call_id: call.id ?? `call_standin_${n}`,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
      status: "completed",
    };
    out.push(sse("response.output_item.added", { output_index: items.length, item: { ...item, arguments: "", status: "in_progress" } }));
    out.push(sse("response.output_item.done", { output_index: items.length, item }));
    items.push(item);
  }
  const input = reply.usage?.input ?? estimateTokens(JSON.stringify(req.input ?? req));
  const output = reply.usage?.output ?? estimateTokens(JSON.stringify(items));
  const usage = {
    input_tokens: input,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: input + output,
  };
  out.push(sse("response.completed", { response: response("completed", { output: items, usage }) }));
  return sseResponse(out, reply.chunkDelayMs ?? 0);
}

/** Start the stand-in on 127.0.0.1 and an ephemeral port. */
export function startResponsesStandin(script: ResponsesScript): Standin {
  return startStandin<ResponsesReply>({
    route: postTo("/v1/responses"),
    script,
    error: errorResponse,
    reply: (reply, req, n) => streamReply(reply, req, n),
    basePath: "/v1",
  });
}

/**
 * A CODEX_HOME whose config.toml names the stand-in as the only provider, with
 * quick retries and no plugin sync or analytics (ground truth §1), and the
 * environment that runs codex offline against it. Nothing else is inherited.
 */
export function codexEnv(dir: string, standinUrl: string, retries = { request: 2, stream: 2, idleMs: 3000 }): Record<string, string> {
  const home = join(dir, "home");
  const codexHome = join(home, ".codex");
  const tmp = join(dir, "tmp");
  for (const d of [codexHome, tmp]) mkdirSync(d, { recursive: true });
  const config = [
    'model = "standin-model"',
    'model_provider = "standin"',
    "check_for_update_on_startup = false",
    "[analytics]",
    "enabled = false",
    "[features]",
    "plugins = false",
    "[model_providers.standin]",
    'name = "Standin"',
    `base_url = "${standinUrl}"`,
    'env_key = "STANDIN_API_KEY"',
    'wire_api = "responses"',
    `request_max_retries = ${retries.request}`,
    `stream_max_retries = ${retries.stream}`,
    `stream_idle_timeout_ms = ${retries.idleMs}`,
  ].join("\n");
  writeFileSync(join(codexHome, "config.toml"), `${config}\n`);
  return {
    PATH: basePath(),
    HOME: home,
    CODEX_HOME: codexHome,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    XDG_DATA_HOME: join(home, ".local", "share"),
    STANDIN_API_KEY: "standin-dummy-key",
    LANG: "C.UTF-8",
    NO_COLOR: "1",
    TERM: "dumb",
  };
}
