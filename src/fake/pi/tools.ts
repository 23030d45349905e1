// The fake pi's tool calls: a scenario step as a call, and a batch of calls run as pi runs them.
import { dirname, resolve } from "node:path";
import { mkdirSync, writeFileSync } from "node:fs";
import type { Json } from "../../core/record.ts";
import { REPORT_TOOL } from "./dialect.ts";
import type { Step, ScenarioUsage } from "./scenarios.ts";
import type { Block, PiStream } from "./stream.ts";

export interface Call {
  block: Block;
  name: string;
  args: Json;
  result: string;
  isError: boolean;
  details?: Json;
  envelope?: { data: Json; invalid: boolean; error?: string; text: string; usage?: ScenarioUsage };
  /** An extension's confirm in the tool_call hook. */
  confirm?: ConfirmSpec;
  /** A write tool call that really writes this file. */
  write?: { path: string; content: string };
}
export type ConfirmSpec = Extract<Step, { confirm: unknown }>["confirm"];
export const isCallStep = (s: Step | undefined): boolean => s !== undefined && ("tool" in s || "envelope" in s || "writeFile" in s);

export type CallStep = Extract<Step, { tool: unknown }> | Extract<Step, { envelope: unknown }> | Extract<Step, { writeFile: unknown }>;

/** The `n`th tool call of the run, from its step. */
export function callOf(step: CallStep, n: number, confirm: ConfirmSpec | undefined): Call {
  if ("writeFile" in step) {
    const { path, content } = step.writeFile;
    const id = `call_write_${n}`;
    const args = { path, content };
    return {
      block: { type: "toolCall", id, name: "write", arguments: args },
      name: "write",
      args,
      result: `Successfully wrote ${content.length} bytes to ${path}`,
      isError: false,
      confirm,
      write: args,
    };
  }
  if ("tool" in step) {
    const t = step.tool;
    const id = `call_${t.name.replace(/[^A-Za-z0-9]/g, "")}_${n}`;
    return {
      block: { type: "toolCall", id, name: t.name, arguments: t.args },
      name: t.name,
      args: t.args,
      result: t.result.replaceAll("${cwd}", process.cwd()),
      isError: t.isError,
      details: t.details,
      confirm,
    };
  }
  const id = `call_report_${n}`;
  return {
    block: { type: "toolCall", id, name: REPORT_TOOL, arguments: step.envelope },
    name: REPORT_TOOL,
    args: step.envelope,
    result: "reported",
    isError: false,
    details: step.envelope,
    envelope: { data: step.envelope, invalid: step.invalid, error: step.errorText, text: step.reply, usage: step.usage },
    confirm,
  };
}

/**
 * One batch of tool calls, as pi runs them in parallel: every start first (an
 * unknown tool ends at once), bash's updates, then the ends of the tools that
 * ran, last call first; then the toolResult messages in call order.
 */
export async function executeTools(run: PiStream, calls: Call[]): Promise<void> {
  const outcomes = new Map<Call, { result: Json; isError: boolean }>();
  const ran: Call[] = [];
  for (const call of calls) {
    const id = call.block.id;
    await run.emit({ type: "tool_execution_start", toolCallId: id, toolName: call.name, args: call.args });
    let immediate: { result: Json; isError: boolean } | undefined;
    // The extension's tool_call hook: a dialog in RPC (blocks until answered, abort does not release it); refused at once without UI.
    const confirmed =
      call.confirm === undefined ||
      (run.ctx.ui !== undefined && (await run.ctx.ui.confirm(call.confirm.title, call.confirm.message, call.confirm.timeout)));
    if (!confirmed && call.confirm)
      immediate = { result: { content: [{ type: "text", text: call.confirm.reason }], details: {} }, isError: true };
    else if (!run.ctx.enabledTools.has(call.name))
      immediate = { result: { content: [{ type: "text", text: `Tool ${call.name} not found` }], details: {} }, isError: true };
    else if (call.envelope?.invalid) {
      const text =
        call.envelope.error ??
        `Validation failed for tool "${REPORT_TOOL}":\n  - status: must be equal to one of the allowed values\n\nReceived arguments:\n${JSON.stringify(call.args, null, 2)}`;
      immediate = { result: { content: [{ type: "text", text }], details: {} }, isError: true };
    }
    if (immediate) {
      outcomes.set(call, immediate);
      await run.emit({
        type: "tool_execution_end",
        toolCallId: id,
        toolName: call.name,
        result: immediate.result,
        isError: immediate.isError,
      });
    } else ran.push(call);
  }
  for (const call of ran) {
    // Confirmed after an abort: the tool still starts, and is cut at once (§5).
    const cut = call.confirm !== undefined && run.abortRequested();
    let refused: string | null = null;
    if (call.write && !cut) {
      const path = resolve(process.cwd(), call.write.path);
      try {
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, call.write.content);
      } catch (error) {
        // As pi's write tool: the error is the tool's result (a read-only file system, a sandbox).
        refused = (error as Error).message;
      }
    }
    const text = refused ?? (cut ? `${call.result}\n\nCommand aborted` : call.result);
    const result: Json = { content: [{ type: "text", text }] };
    if (call.details !== undefined) result.details = call.details;
    outcomes.set(call, { result, isError: call.isError || cut || refused !== null });
    if (call.name === "bash") {
      const base = { type: "tool_execution_update", toolCallId: call.block.id, toolName: call.name, args: call.args };
      await run.emit({ ...base, partialResult: { content: [] } });
      await run.emit({ ...base, partialResult: { content: [{ type: "text", text: call.result }], details: {} } });
    }
  }
  for (const call of [...ran].reverse()) {
    const outcome = outcomes.get(call);
    if (outcome)
      await run.emit({
        type: "tool_execution_end",
        toolCallId: call.block.id,
        toolName: call.name,
        result: outcome.result,
        isError: outcome.isError,
      });
  }
  for (const call of calls) {
    const outcome = outcomes.get(call);
    if (!outcome) continue;
    const message: Json = { role: "toolResult", toolCallId: call.block.id, toolName: call.name, content: outcome.result.content };
    if (outcome.result.details !== undefined) message.details = outcome.result.details;
    message.isError = outcome.isError;
    message.timestamp = Date.now();
    await run.toolResult(message);
  }
}
