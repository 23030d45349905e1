// The tool calls of an opencode serve turn, from their `tool` parts: each
// remembered by its part id as it goes pending → running → completed/error,
// counted when first seen; past MAX_TOOLS the oldest are forgotten. Pure.
import { MAX_TOOL_CHARS } from "../progress.ts";
import type { Json } from "../record.ts";
import { clean } from "../text.ts";
import { objectOf } from "./common.ts";

/** A tool part whose status changed. */
export interface ToolUpdate {
  tool: string;
  /** The part's `state` (status, input, output, error). */
  state: Json;
  status: string;
  /** Seen for the first time. */
  started: boolean;
  /** Completed or failed. */
  ended: boolean;
}

const MAX_TOOLS = 256;

const isEnded = (status: string) => status === "completed" || status === "error";

export class ServeTools {
  private readonly statuses = new Map<string, string>();
  calls = 0;

  /** A `tool` part and its id: what changed, null when its status is the one already seen. */
  update(id: string, part: Json): ToolUpdate | null {
    const tool = clean(part.tool, MAX_TOOL_CHARS) || "unnamed";
    const state = objectOf(part.state);
    const status = clean(state.status, 20);
    const known = this.statuses.get(id);
    if (known === status) return null;
    if (known === undefined) {
      this.calls += 1;
      if (this.statuses.size >= MAX_TOOLS) this.statuses.delete(this.statuses.keys().next().value as string);
    }
    this.statuses.set(id, status);
    return { tool, state, status, started: known === undefined, ended: isEnded(status) };
  }

  /** Calls started and not ended (pending or running). */
  get open(): number {
    let open = 0;
    for (const status of this.statuses.values()) if (!isEnded(status)) open += 1;
    return open;
  }
}
