// The two pi releases the fake speaks, and the names both share.
export type PiDialect = "0.73.1" | "0.85";
export const VERSION: Record<PiDialect, string> = { "0.73.1": "0.73.1", "0.85": "0.85.0" };
export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh"];
export const BUILTIN_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];
export const DEFAULT_TOOLS = ["read", "bash", "edit", "write"];
export const REPORT_TOOL = "report_phase";
export const INVENTORY_TYPE = "agentport-inventory";
export const API = "openai-completions";

export function piDialect(value = process.env.AGENTPORT_FAKE_PI_DIALECT): PiDialect {
  if (value === undefined || value === "" || value === "0.73.1") return "0.73.1";
  if (value === "0.85" || value === "0.85.0") return "0.85";
  throw new Error(`AGENTPORT_FAKE_PI_DIALECT must be 0.73.1 or 0.85, not "${value}"`);
}
