// What an ACP session's `session/update`s say: the agent's text (its message
// chunks; text after a tool call is a new reply), thinking, tool calls, plan
// updates and usage, each told as progress. Pure.
import type { LoopObserver } from "../loop.ts";
import type { ProgressEvent } from "../progress.ts";
import type { Json } from "../record.ts";
import { AcpTools } from "./tools.ts";
import type { AcpUsage } from "./usage.ts";

// The rebuilt text is bounded: a reply past it keeps its head.
const MAX_TEXT_CHARS = 4 * 1024 * 1024;

export class AcpUpdates {
  text = "";
  chunks = 0;
  plans = 0;
  readonly tools: AcpTools;
  private thinking = false;

  constructor(
    cwd: string,
    private readonly send: (event: ProgressEvent) => void,
    loop: LoopObserver | undefined,
    readonly usage: AcpUsage,
  ) {
    this.tools = new AcpTools(cwd, send, loop);
  }

  update(update: Json): void {
    const kind = update.sessionUpdate;
    if (kind !== "agent_thought_chunk") this.thinking = false;
    switch (kind) {
      case "agent_message_chunk": {
        const content = update.content as Json | null | undefined;
        if (content === null || typeof content !== "object" || content.type !== "text" || typeof content.text !== "string") return;
        this.send({ kind: this.chunks === 0 ? "assistant_text" : "activity" });
        this.chunks += 1;
        if (this.text.length < MAX_TEXT_CHARS) this.text += content.text.slice(0, MAX_TEXT_CHARS - this.text.length);
        return;
      }
      case "agent_thought_chunk":
        if (!this.thinking) this.send({ kind: "thinking" });
        this.thinking = true;
        return;
      case "tool_call":
      case "tool_call_update":
        if (kind === "tool_call") this.text = "";
        this.tools.observe(update);
        return;
      case "plan":
        this.plans += 1;
        this.send({ kind: "activity", detail: `plan: ${Array.isArray(update.entries) ? update.entries.length : 0} entries` });
        return;
      case "usage_update":
        this.usage.update(update);
        this.send({ kind: "activity" });
        return;
      default:
        this.send({ kind: "activity" });
    }
  }
}
