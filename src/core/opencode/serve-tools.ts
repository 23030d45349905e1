// opencode serve's tool parts: one part per call, updated in place (pending →
// running → completed/error); the first update of a part is the call's start,
// its completed or error update its end. A call to a tool opencode does not
// offer comes back as the `invalid` tool: a refusal.
import { digest } from "../digest.ts";
import { actionFingerprint, type LoopObserver } from "../loop.ts";
import { MAX_TOOL_CHARS, type ProgressEvent } from "../progress.ts";
import type { Json } from "../record.ts";
import { clean } from "../text.ts";
import { INVALID_TOOL, objectOf, REJECTED, toolDetail } from "./common.ts";
import type { ServePermissions } from "./serve-permissions.ts";

// Tool parts remembered by id; past this the oldest are forgotten.
const MAX_TOOLS = 256;

export class ServeTools {
  calls = 0;
  errors = 0;
  /** The last status seen of each part. */
  private readonly parts = new Map<string, string>();

  constructor(
    private readonly cwd: string,
    private readonly loop: LoopObserver | undefined,
    private readonly permissions: ServePermissions,
    private readonly send: (event: ProgressEvent) => void,
    /** A new call started (before its tool_started is sent). */
    private readonly onStart: () => void,
  ) {}

  /** A `message.part.updated` of type tool. */
  update(id: string, part: Json): void {
    const tool = clean(part.tool, MAX_TOOL_CHARS) || "unnamed";
    const state = objectOf(part.state);
    const status = clean(state.status, 20);
    const known = this.parts.get(id);
    if (known === undefined) {
      this.calls += 1;
      this.onStart();
      if (this.parts.size >= MAX_TOOLS) this.parts.delete(this.parts.keys().next().value as string);
      this.parts.set(id, status);
      this.send({ kind: "tool_started", tool, detail: toolDetail(tool, objectOf(state.input), this.cwd) });
    } else if (known === status) {
      return;
    }
    this.parts.set(id, status);
    if (status !== "completed" && status !== "error") return;
    const error = typeof state.error === "string" ? state.error : "";
    if (tool === INVALID_TOOL) {
      this.permissions.refuse(`${clean(objectOf(state.input).tool, MAX_TOOL_CHARS) || "unknown tool"} (not offered)`);
      this.errors += 1;
      this.send({ kind: "tool_failed", tool });
    } else if (status === "error") {
      this.errors += 1;
      // A rejection is named once, by the reply that made it (permission.replied).
      if (!error.startsWith(REJECTED)) this.send({ kind: "tool_failed", tool });
    } else {
      this.send({ kind: "tool_finished", tool });
    }
    this.loop?.action(tool, actionFingerprint(tool, digest(state.input ?? ""), digest([status, state.output ?? error])));
  }
}
