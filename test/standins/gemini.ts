// A loopback stand-in of the Gemini API, for running the real gemini CLI offline.
//   POST /v1beta/models/<model>:streamGenerateContent?alt=sse -> SSE `data: {candidates…}` chunks,
//   the last with finishReason STOP and usageMetadata.
// Replies come from a script (see ./util.ts `Reply`); requests beyond a list repeat its last reply.
// Beyond the shared replies: `{ hang: true }` answers 200 and then sends nothing.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeWorld, type World } from "./world.ts";
import {
  basePath,
  estimateTokens,
  splitDeltas,
  sseResponse,
  startStandin,
  type ErrorReply,
  type RecordedRequest,
  type Reply,
  type Standin,
} from "./util.ts";

export type GeminiReply = Reply | { hang: true };
export type GeminiScript = GeminiReply[] | ((req: RecordedRequest, n: number) => GeminiReply);

const STATUS_NAMES: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

function errorResponse(reply: ErrorReply): Response {
  const message = typeof reply.body === "string" ? reply.body : `standin error ${reply.status}`;
  const body =
    typeof reply.body === "object" && reply.body !== null
      ? reply.body
      : { error: { code: reply.status, message, status: STATUS_NAMES[reply.status] ?? "UNKNOWN" } };
  return new Response(JSON.stringify(body), { status: reply.status, headers: { "content-type": "application/json" } });
}

function streamReply(reply: Exclude<GeminiReply, ErrorReply>, req: RecordedRequest, model: string): Response {
  if ("hang" in reply) return sseResponse([], 0, {}, true);
  const chunk = (parts: object[], last: boolean, usage?: object) =>
    `data: ${JSON.stringify({ candidates: [{ content: { parts, role: "model" }, index: 0, ...(last ? { finishReason: "STOP" } : {}) }], ...(usage ? { usageMetadata: usage } : {}), modelVersion: model, responseId: "standin" })}\n\n`;
  const out: string[] = [];
  const text = reply.text ?? "";
  const deltas = splitDeltas(text);
  for (const part of deltas) out.push(chunk([{ text: part }], false));
  const prompt = reply.usage?.input ?? estimateTokens(JSON.stringify(req.contents ?? req));
  const completion = reply.usage?.output ?? Math.max(1, estimateTokens(text));
  const usage = { promptTokenCount: prompt, candidatesTokenCount: completion, totalTokenCount: prompt + completion };
  const finalParts =
    "toolCall" in reply ? [{ functionCall: { name: reply.toolCall.name, args: reply.toolCall.arguments } }] : [{ text: "" }];
  out.push(chunk(finalParts, true, usage));
  return sseResponse(out, reply.chunkDelayMs ?? 0);
}

/** Start the stand-in on 127.0.0.1 and an ephemeral port. `url` is the base URL gemini takes (no path). */
export function startGeminiStandin(script: GeminiScript): Standin {
  const route = (method: string, path: string) => {
    const model = /^\/v1beta\/models\/([^/:]+):streamGenerateContent$/.exec(path)?.[1];
    return method === "POST" && model !== undefined ? [decodeURIComponent(model)] : null;
  };
  return startStandin<GeminiReply>({
    route,
    script,
    error: errorResponse,
    reply: (reply, req, _n, [model]) => streamReply(reply, req, model ?? "standin"),
    basePath: "",
  });
}

/**
 * A HOME whose ~/.gemini/settings.json selects the API-key auth (else the
 * base URL makes gemini pick the "gateway" auth and exit 41), with no usage
 * statistics, telemetry or updates, and few attempts (ground truth §1, §3);
 * and the environment that runs gemini offline against the stand-in.
 */
export function geminiEnv(dir: string, standinUrl: string, maxAttempts = 2): Record<string, string> {
  const home = join(dir, "home");
  const tmp = join(dir, "tmp");
  for (const d of [join(home, ".gemini"), tmp]) mkdirSync(d, { recursive: true });
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, maxAttempts },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  };
  writeFileSync(join(home, ".gemini", "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
  return {
    PATH: basePath(),
    HOME: home,
    TMPDIR: tmp,
    XDG_CONFIG_HOME: join(home, ".config"),
    XDG_CACHE_HOME: join(home, ".cache"),
    GOOGLE_GEMINI_BASE_URL: standinUrl,
    GEMINI_API_KEY: "standin-dummy-key",
    LANG: "C.UTF-8",
    NO_COLOR: "1",
    TERM: "dumb",
  };
}

/** A world for the real gemini (`bin`) on a new stand-in playing `script`, kept in `standins` for the caller to stop. */
export function geminiWorld(prefix: string, script: GeminiScript, standins: Standin[], bin: string): World {
  const standin = startGeminiStandin(script);
  standins.push(standin);
  return makeWorld(prefix, standin, (dir, url) => geminiEnv(dir, url, 2), { AGENTPORT_GEMINI_BIN: bin });
}
