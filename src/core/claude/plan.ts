// What the claude reducer reads of a big record (scan.ts): assistant and user
// message blocks keep their type, id, name and is_error; tool inputs keep the
// one field shown per tool; texts, tool inputs and tool results are only
// digested; tool_use_result (a second copy of the result) is never read;
// results and system records are kept whole, and of the rest only the type.
import type { Plan } from "../scan-plan.ts";
import { TOOL_DETAILS } from "./tools.ts";

const INPUT: Plan = { fields: Object.fromEntries(Object.values(TOOL_DETAILS).map((field) => [field, "keep"])), others: "digest" };
const BLOCK: Plan = { fields: { text: "digest", thinking: "digest", signature: "digest", content: "digest", input: INPUT } };
const MESSAGE: Plan = { fields: { content: { items: BLOCK } } };

export const CLAUDE_PLAN: Plan = {
  on: "type",
  cases: {
    assistant: { fields: { message: MESSAGE } },
    user: { fields: { message: MESSAGE, tool_use_result: "skip" } },
    result: "keep",
    system: "keep",
  },
  // Of any other record the reducer reads only its type: a stream that is not claude's
  // (pi's 6 MB agent_end lines) or a record of a newer claude is checked, not built.
  otherwise: "skip",
};
