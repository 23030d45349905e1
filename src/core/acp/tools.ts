// The tool calls of an ACP session as its `session/update`s tell them
// (`tool_call`, `tool_call_update`) and as its permission requests name them
// (gemini asks before any `tool_call`). Progress names a tool by its kind (a
// closed list) and a relative path: never a title, which may be a command. Pure.
import { digest } from "../digest.ts";
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { MAX_DETAIL_CHARS, type ProgressEvent } from "../progress.ts";
import type { Json } from "../record.ts";
import { relativePath } from "../text.ts";

const KINDS: ReadonlySet<string> = new Set([
  "read",
  "edit",
  "delete",
  "move",
  "search",
  "execute",
  "think",
  "fetch",
  "switch_mode",
  "other",
]);
const MAX_OPEN_TOOLS = 1024;

interface OpenTool {
  kind: string;
  inputDigest: string;
  detail: string;
}

export class AcpTools {
  calls = 0;
  failed = 0;
  private readonly open = new Map<string, OpenTool>();

  constructor(
    private readonly cwd: string,
    private readonly send: (event: ProgressEvent) => void,
    private readonly loop: LoopObserver | undefined,
  ) {}

  /** A tool's kind as one of ACP's, else "other". */
  static kindOf(value: unknown): string {
    return typeof value === "string" && KINDS.has(value) ? value : "other";
  }

  /** The tool's path (its first location, else a diff's), relative to the session's folder. */
  detailOf(call: Json): string {
    const locations = Array.isArray(call.locations) ? (call.locations as unknown[]) : [];
    const first = locations[0] as Json | undefined;
    return first !== null && typeof first === "object" ? relativePath(first.path, this.cwd, MAX_DETAIL_CHARS) : "";
  }

  /** A `tool_call`, a `tool_call_update` or a permission request's toolCall: started when new, finished or failed by its status. */
  observe(call: Json): void {
    const id = typeof call.toolCallId === "string" ? call.toolCallId : "";
    let tool = this.open.get(id);
    if (tool === undefined) {
      tool = {
        kind: AcpTools.kindOf(call.kind),
        inputDigest: this.loop !== undefined ? digest(call.rawInput ?? call.title ?? null) : "",
        detail: this.detailOf(call),
      };
      this.calls += 1;
      if (this.open.size < MAX_OPEN_TOOLS) this.open.set(id, tool);
      this.send({ kind: "tool_started", tool: tool.kind, detail: tool.detail });
    } else if (call.kind !== undefined) {
      tool.kind = AcpTools.kindOf(call.kind);
    }
    if (call.status === "completed" || call.status === "failed") {
      this.open.delete(id);
      if (call.status === "failed") this.failed += 1;
      this.send({ kind: call.status === "completed" ? "tool_finished" : "tool_failed", tool: tool.kind });
      this.loop?.action(
        tool.kind,
        actionFingerprint(tool.kind, tool.inputDigest, digest([call.status, call.content ?? null, call.rawOutput ?? null])),
      );
    }
  }

  /** A rejected request's tool never runs: it is no longer open. */
  close(id: unknown): void {
    if (typeof id === "string") this.open.delete(id);
  }
}
