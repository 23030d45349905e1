// codex's tool calls: items of a tool type (command_execution, file_change,
// mcp_tool_call, web_search), opened by item.started and closed by
// item.completed with a status; `declined` ones are the refusals the stream
// shows (the rest only stderr has: stderr.ts).
import { digest } from "../digest.ts";
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { MAX_DETAIL_CHARS, type ProgressEvent } from "../progress.ts";
import { MAX_REFUSED } from "../reduction.ts";
import type { Json } from "../record.ts";
import { clean, relativePath } from "../text.ts";
import type { Refused } from "../verdict.ts";

// Item types that are a tool call, with the name progress shows for them.
const TOOL_ITEMS: Readonly<Record<string, string>> = {
  command_execution: "shell",
  file_change: "apply_patch",
  mcp_tool_call: "mcp",
  web_search: "web_search",
};
const MAX_OPEN_ITEMS = 1024;

export class CodexToolCalls {
  calls = 0;
  errors = 0;
  declinedCount = 0;
  readonly declined: Refused[] = [];
  private readonly open = new Map<string, string>();

  constructor(
    private readonly cwd: string,
    private readonly loop: LoopObserver | undefined,
    private readonly send: (event: ProgressEvent) => void,
  ) {}

  get openCount(): number {
    return this.open.size;
  }

  /** The progress name of an item's tool, or undefined when the item is no tool call. */
  static toolOf(item: Json): string | undefined {
    return TOOL_ITEMS[item.type as string];
  }

  /** item.started of a tool item. */
  started(item: Json, tool: string): void {
    if (typeof item.id === "string" && this.open.size < MAX_OPEN_ITEMS) this.open.set(item.id, tool);
    this.calls += 1;
    this.send({ kind: "tool_started", tool, detail: this.detail(item) });
  }

  /** item.completed of a tool item. */
  completed(item: Json, tool: string): void {
    const id = typeof item.id === "string" ? item.id : "";
    // Some items (file_change of a quick patch) may come only completed.
    if (!this.open.delete(id)) this.calls += 1;
    const status = clean(item.status, 40);
    if (status === "declined") {
      this.declinedCount += 1;
      if (this.declined.length < MAX_REFUSED) this.declined.push({ kind: "permission", subject: `${tool} (declined)` });
    }
    if (status === "failed" || status === "declined") {
      this.errors += 1;
      this.send({ kind: "tool_failed", tool });
    } else {
      this.send({ kind: "tool_finished", tool });
    }
    this.loop?.action(
      tool,
      actionFingerprint(tool, digest(item.command ?? item.changes ?? ""), digest([status, item.exit_code, item.aggregated_output])),
    );
  }

  /** The one detail shown for a tool: a file_change's first path (never a command line). */
  private detail(item: Json): string {
    if (item.type !== "file_change" || !Array.isArray(item.changes)) return "";
    const first = item.changes[0] as Json | undefined;
    return first && typeof first === "object" ? relativePath(first.path, this.cwd, MAX_DETAIL_CHARS) : "";
  }
}
