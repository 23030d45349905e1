// pi's tool calls as the stream shows them: `tool_execution_start` opens one,
// `tool_execution_end` closes it; the envelope tool's end carries the envelope
// (its `details`) or pi's refusal of its arguments.
import { digest } from "../digest.ts";
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { MAX_DETAIL_CHARS, MAX_TOOL_CHARS, type ProgressEvent } from "../progress.ts";
import { MAX_VALUE_CHARS } from "../reduction.ts";
import type { Json } from "../record.ts";
import { clean, relativePath } from "../text.ts";

export const ENVELOPE_TOOL = "report_phase";
// The one input shown per pi tool: the path for file tools. bash shows only
// its name: a command line is where credentials are typed.
const PATH_TOOLS = new Set(["read", "edit", "write"]);
const MAX_OPEN_TOOLS = 1024;

interface OpenTool {
  name: string;
  inputDigest: string;
}

export class PiToolCalls {
  calls = 0;
  errors = 0;
  envelope: Json | null = null;
  envelopeError: string | null = null;
  private readonly open = new Map<string, OpenTool>();

  constructor(
    private readonly cwd: string,
    private readonly envelopeTool: string,
    private readonly loop: LoopObserver | undefined,
    private readonly send: (event: ProgressEvent) => void,
  ) {}

  get openCount(): number {
    return this.open.size;
  }

  start(event: Json): void {
    this.calls += 1;
    const name = clean(event.toolName, MAX_TOOL_CHARS);
    const args = event.args !== null && typeof event.args === "object" ? (event.args as Json) : {};
    const detail = PATH_TOOLS.has(name) ? relativePath(args.path ?? args.file_path, this.cwd, MAX_DETAIL_CHARS) : "";
    if (typeof event.toolCallId === "string" && this.open.size < MAX_OPEN_TOOLS) {
      this.open.set(event.toolCallId, { name, inputDigest: this.loop !== undefined ? digest(event.args) : "" });
    }
    this.send({ kind: "tool_started", tool: name, detail });
  }

  end(event: Json): void {
    const id = event.toolCallId;
    const call = typeof id === "string" ? this.open.get(id) : undefined;
    if (call !== undefined) this.open.delete(id as string);
    const name = call?.name ?? clean(event.toolName, MAX_TOOL_CHARS);
    const result = event.result !== null && typeof event.result === "object" ? (event.result as Json) : {};
    if (event.isError === true) {
      this.errors += 1;
      if (name === this.envelopeTool) this.envelopeError = firstLine(result.content);
      this.send({ kind: "tool_failed", tool: name });
    } else {
      if (name === this.envelopeTool && result.details !== null && typeof result.details === "object" && !Array.isArray(result.details)) {
        this.envelope = result.details as Json;
        this.envelopeError = null;
      }
      this.send({ kind: "tool_finished", tool: name });
    }
    if (this.loop !== undefined && call !== undefined) {
      this.loop.action(name, actionFingerprint(name, call.inputDigest, digest([event.isError === true, result.content])));
    }
  }
}

/** The first line of a tool result's text: pi's own message, before any echo of the arguments. */
function firstLine(content: unknown): string {
  if (!Array.isArray(content)) return "";
  const text = content.find((b) => b !== null && typeof b === "object" && typeof (b as Json).text === "string") as Json | undefined;
  if (text === undefined) return "";
  const body = (text.text as string).split("\n\nReceived arguments")[0] ?? "";
  return clean(body, MAX_VALUE_CHARS * 2);
}
