// What the pi reducer reads of a big record (scan.ts), by event type. Only an
// assistant message_end's texts are kept; the partial and repeated messages
// (message_start/update, turn_end, agent_end) are skipped; tool arguments
// keep their path and are digested; a tool result's content is digested and
// its details kept only for the envelope tool, whose failure text is read;
// of the records the reducer reads no field of, only the type.
import type { Plan } from "../scan-plan.ts";

export function piPlan(envelopeTool: string): Plan {
  return {
    on: "type",
    cases: {
      message_start: { fields: { message: "skip" } },
      message_update: { fields: { message: "skip", assistantMessageEvent: { fields: { type: "keep" }, others: "skip" } } },
      message_end: {
        fields: {
          message: {
            on: "role",
            cases: {
              assistant: { fields: { content: { items: { fields: { thinking: "skip", thinkingSignature: "skip", arguments: "skip" } } } } },
            },
            otherwise: "skip",
          },
        },
      },
      turn_end: { fields: { message: "skip", toolResults: "skip" } },
      agent_end: { fields: { messages: "skip" } },
      tool_execution_start: { fields: { args: { fields: { path: "keep", file_path: "keep" }, others: "digest" } } },
      tool_execution_update: { fields: { args: "skip", partialResult: "skip" } },
      // The reducer names a result by its call's tool: pi repeats it in the end event.
      tool_execution_end: {
        on: "toolName",
        cases: { [envelopeTool]: "keep" },
        otherwise: { fields: { result: { fields: { content: "digest", details: "skip" } } } },
      },
      // The other records the reducer reads a field of.
      session: "keep",
      auto_retry_start: "keep",
      auto_retry_end: "keep",
      compaction_end: "keep",
      entry_appended: "keep",
    },
    // Of any other record the reducer reads only its type: a stream that is not pi's
    // (claude's 2 MB tool results) or an event of a newer pi is checked, not built.
    otherwise: "skip",
  };
}
