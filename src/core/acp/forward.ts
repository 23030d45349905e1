// What `agentport acp` tells its client of a supervised run: the run's progress
// events (allow-listed and bounded, as on stderr) as `session/update`s, and the
// verdict as the prompt's answer. Pure.
import type { ProgressEvent } from "../progress.ts";
import type { Verdict } from "../verdict.ts";
import type { PromptResult, RpcError, SessionUpdate, ToolKind } from "./protocol.ts";

/** The JSON-RPC error code of a prompt whose run did not succeed; `data` carries the verdict and the exit code. */
export const RUN_FAILED = -32000;

// The agents' tool names (claude's, pi's, codex's, gemini's, opencode's) as ACP tool kinds; any other is "other".
const KINDS: Readonly<Record<string, ToolKind>> = {
  // An ACP agent behind agentport names its tools by ACP's own kinds.
  delete: "delete",
  move: "move",
  search: "search",
  execute: "execute",
  switch_mode: "switch_mode",
  read: "read",
  read_file: "read",
  read_many_files: "read",
  view: "read",
  ls: "read",
  list: "read",
  list_directory: "read",
  notebookread: "read",
  edit: "edit",
  write: "edit",
  multiedit: "edit",
  write_file: "edit",
  replace: "edit",
  apply_patch: "edit",
  notebookedit: "edit",
  patch: "edit",
  bash: "execute",
  shell: "execute",
  run_shell_command: "execute",
  command_execution: "execute",
  exec: "execute",
  grep: "search",
  glob: "search",
  find: "search",
  search_file_content: "search",
  codebase_search: "search",
  websearch: "search",
  google_web_search: "search",
  webfetch: "fetch",
  web_fetch: "fetch",
  fetch: "fetch",
  task: "think",
  todowrite: "think",
  think: "think",
};

export function toolKind(tool: string | undefined): ToolKind {
  return KINDS[(tool ?? "").toLowerCase()] ?? "other";
}

/** Turns one run's progress into session updates: each tool start a tool call, its end the oldest open call of that tool. */
export class ProgressForward {
  private next = 1;
  private readonly openCalls: { id: string; tool: string }[] = [];

  constructor(private readonly send: (update: SessionUpdate) => void) {}

  event(event: ProgressEvent): void {
    switch (event.kind) {
      case "tool_started": {
        const tool = event.tool ?? "tool";
        const id = `agentport-tool-${this.next++}`;
        this.openCalls.push({ id, tool });
        this.send({
          sessionUpdate: "tool_call",
          toolCallId: id,
          title: event.detail ? `${tool}: ${event.detail}` : tool,
          kind: toolKind(tool),
          status: "in_progress",
        });
        return;
      }
      case "tool_finished":
      case "tool_failed": {
        const at = this.openCalls.findIndex((c) => c.tool === (event.tool ?? "tool"));
        const [call] = this.openCalls.splice(at === -1 ? 0 : at, 1);
        if (call !== undefined)
          this.send({
            sessionUpdate: "tool_call_update",
            toolCallId: call.id,
            status: event.kind === "tool_finished" ? "completed" : "failed",
          });
        return;
      }
      case "provider_retry":
        this.send({
          sessionUpdate: "agent_thought_chunk",
          content: { type: "text", text: `[agentport] provider retry${event.detail ? `: ${event.detail}` : ""}\n` },
        });
        return;
      default:
        // started, thinking, assistant_text, activity: no words to forward (the text comes with the verdict).
        return;
    }
  }

  /** The run is over: a call still open did not finish. */
  close(): void {
    for (const call of this.openCalls.splice(0)) this.send({ sessionUpdate: "tool_call_update", toolCallId: call.id, status: "failed" });
  }
}

/**
 * The prompt's answer from the verdict: a success ends the turn (`end_turn`),
 * a cancel the client asked for is `cancelled`, the agent's token and turn
 * limits are theirs; every other outcome is an error carrying the verdict, so
 * a failed run never reads as a finished turn.
 */
export function promptAnswer(
  verdict: Verdict,
  exitCode: number,
  cancelAsked: boolean,
): { ok: true; result: PromptResult } | { ok: false; error: RpcError } {
  const meta = { agentport: { verdict, exit_code: exitCode } };
  const usage =
    verdict.tokens === null
      ? undefined
      : {
          inputTokens: verdict.tokens.input,
          outputTokens: verdict.tokens.output,
          cachedReadTokens: verdict.tokens.cache_read,
          cachedWriteTokens: verdict.tokens.cache_write,
          totalTokens: verdict.tokens.input + verdict.tokens.output + verdict.tokens.cache_read + verdict.tokens.cache_write,
        };
  const stop = verdict.ok
    ? "end_turn"
    : cancelAsked && verdict.status === "aborted"
      ? "cancelled"
      : verdict.failure?.kind === "token_limit"
        ? "max_tokens"
        : verdict.failure?.kind === "turn_limit"
          ? "max_turn_requests"
          : null;
  if (stop !== null) return { ok: true, result: { stopReason: stop, ...(usage ? { usage } : {}), _meta: meta } };
  return {
    ok: false,
    error: { code: RUN_FAILED, message: `${verdict.status}: ${verdict.failure?.message ?? "no reason given"}`, data: meta },
  };
}
