// What the claude reducer reads of a big record (scan.ts): assistant and user
// message blocks keep their type, id, name and is_error; tool inputs keep the
// one field shown per tool; texts, tool inputs and tool results are only
// digested; tool_use_result (a second copy of the result) is never read.
import type { Plan } from "../scan.ts";
import { TOOL_DETAILS } from "./tools.ts";

const INPUT: Plan = { fields: Object.fromEntries(Object.values(TOOL_DETAILS).map((field) => [field, "keep"])), others: "digest" };
const BLOCK: Plan = { fields: { text: "digest", thinking: "digest", signature: "digest", content: "digest", input: INPUT } };
const MESSAGE: Plan = { fields: { content: { items: BLOCK } } };

export const CLAUDE_PLAN: Plan = {
  on: "type",
  cases: {
    assistant: { fields: { message: MESSAGE } },
    user: { fields: { message: MESSAGE, tool_use_result: "skip" } },
  },
};
