// claude's tool calls as the stream shows them: a `tool_use` block opens one,
// a `tool_result` block closes it; refusals (permission denials, a question
// no one could answer) are kept once per call id, bounded.
import { digest } from "../digest.ts";
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { MAX_DETAIL_CHARS, MAX_TOOL_CHARS, type ProgressEvent } from "../progress.ts";
import { MAX_REFUSED, MAX_SUBJECT_CHARS } from "../reduction.ts";
import type { Json } from "../record.ts";
import { clean, relativePath } from "../text.ts";
import type { Refused } from "../verdict.ts";
import type { ClaudeSystem } from "./events.ts";
import { PATH_INPUTS, QUESTION_TOOL, TOOL_DETAILS } from "./tools.ts";

// Tool calls whose result has not arrived yet, kept to name a failed tool and
// to fingerprint the call once it completes. Past the bound a result is still
// counted, only not named.
const MAX_OPEN_TOOLS = 1024;

interface OpenTool {
  name: string;
  inputDigest: string;
  detail: string;
}

export class ClaudeToolCalls {
  calls = 0;
  errors = 0;
  refusedCount = 0;
  readonly refused: Refused[] = [];
  private readonly open = new Map<string, OpenTool>();
  private readonly refusedIds = new Set<string>();

  constructor(
    private readonly cwd: string,
    private readonly loop: LoopObserver | undefined,
    private readonly send: (event: ProgressEvent) => void,
  ) {}

  get openCount(): number {
    return this.open.size;
  }

  /** A `tool_use` block. */
  started(block: Json): void {
    this.calls += 1;
    const name = clean(block.name, MAX_TOOL_CHARS);
    const detail = this.detail(name, block.input);
    if (typeof block.id === "string" && this.open.size < MAX_OPEN_TOOLS) {
      this.open.set(block.id, { name, inputDigest: this.loop !== undefined ? digest(block.input) : "", detail });
    }
    this.send({ kind: "tool_started", tool: name, detail });
  }

  /** A `tool_result` block. */
  finished(block: Json): void {
    const toolId = block.tool_use_id;
    const call = typeof toolId === "string" ? this.open.get(toolId) : undefined;
    if (call !== undefined) this.open.delete(toolId as string);
    const name = call?.name ?? "";
    if (block.is_error === true) {
      this.errors += 1;
      // AskUserQuestion is not offered under -p: the question reached no one.
      // Its text is the model's; only the kind is kept.
      if (name === QUESTION_TOOL) this.refuse("question", toolId, QUESTION_TOOL, "");
      this.send({ kind: "tool_failed", tool: name });
    } else {
      this.send({ kind: "tool_finished", tool: name });
    }
    if (this.loop !== undefined && call !== undefined) {
      // The id differs on every call; everything else is the result.
      const { tool_use_id: _id, ...result } = block;
      this.loop.action(name, actionFingerprint(name, call.inputDigest, digest(result)));
    }
  }

  /** A result's `permission_denials`; their number, or undefined when it has none. */
  denials(denials: unknown): number | undefined {
    if (!Array.isArray(denials)) return undefined;
    for (const denial of denials) {
      if (denial === null || typeof denial !== "object") continue;
      const d = denial as Json;
      const name = typeof d.tool_name === "string" ? d.tool_name : "";
      this.refuse("permission", d.tool_use_id, name, this.detail(name, d.tool_input));
    }
    return denials.length;
  }

  /** A `system/permission_denied` record (only on the --permission-prompt-tool stdio path, ground truth §5). */
  denied(record: ClaudeSystem): void {
    const toolId = record.tool_use_id;
    const call = typeof toolId === "string" ? this.open.get(toolId) : undefined;
    const name = typeof record.tool_name === "string" ? record.tool_name : (call?.name ?? "");
    this.refuse("permission", toolId, name, call?.detail ?? "");
  }

  private refuse(kind: Refused["kind"], toolId: unknown, name: string, detail: string): void {
    if (typeof toolId === "string") {
      if (this.refusedIds.has(toolId)) return;
      if (this.refusedIds.size < MAX_OPEN_TOOLS) this.refusedIds.add(toolId);
    }
    this.refusedCount += 1;
    if (this.refused.length < MAX_REFUSED) {
      const subject = name && detail ? `${name}: ${detail}` : name;
      this.refused.push({ kind, subject: clean(subject, MAX_SUBJECT_CHARS) });
    }
  }

  /** The one input of `name`'s call shown for it, or "". */
  private detail(name: string, input: unknown): string {
    const field = TOOL_DETAILS[name];
    if (field === undefined || input === null || typeof input !== "object") return "";
    const value = (input as Json)[field];
    if (PATH_INPUTS.has(field)) return relativePath(value, this.cwd, MAX_DETAIL_CHARS);
    return clean(value, MAX_DETAIL_CHARS);
  }
}
