// The fake pi's prompt: a scenario's steps played as model answers, tool calls and process events.
import { closeStdout, startGrandchild, writeHugeLine, writeOut } from "../runtime.ts";
import type { Step, ScenarioUsage } from "./scenarios.ts";
import { PiStream, type Block } from "./stream.ts";
import { callOf, executeTools, isCallStep, type Call, type CallStep, type ConfirmSpec } from "./tools.ts";

export class PiRun extends PiStream {
  private calls = 0;
  /** A confirm step waiting for the next tool call. */
  private pendingConfirm: ConfirmSpec | undefined;

  /** One prompt: its agent run, plus the continue() runs of auto-retries. Returns an exit code to stop the process with. */
  async prompt(text: string, steps: Step[] = this.scenario.steps): Promise<number | undefined> {
    this.failed = false;
    this.retryAttempt = 0;
    this.pendingConfirm = undefined;
    const user = { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
    this.runOpen = true;
    this.runMessages = [user];
    this.turnAssistant = null;
    this.turnToolResults = [];
    await this.emit({ type: "agent_start" });
    await this.emit({ type: "turn_start" });
    await this.emit({ type: "message_start", message: user });
    await this.emit({ type: "message_end", message: user });

    let held: { blocks: Block[]; calls: Call[]; usage?: ScenarioUsage; chunkDelayMs?: number } = { blocks: [], calls: [] };
    const flushHeld = async () => {
      if (held.blocks.length > 0 && !this.failed)
        await this.assistant(held.blocks, held.calls.length > 0 ? "toolUse" : "stop", held.usage, held.chunkDelayMs);
      const calls = held.calls;
      held = { blocks: [], calls: [] };
      if (calls.length > 0 && !this.failed) await executeTools(this, calls);
    };
    let script = steps;
    for (let i = 0; ; i++) {
      if (i >= script.length) {
        await flushHeld();
        // pi polls its steering queue once more before the run would end: a message that came in time is answered.
        if (this.failed || this.abortRequested() || !this.runOpen || !(await this.steer())) break;
        script = this.scenario.steered ?? [{ text: "Noted." }];
        i = -1;
        continue;
      }
      if (this.abortRequested()) {
        // pi's abort: the model call in flight (or the next one) ends "aborted", then agent_end.
        held = { blocks: [], calls: [] };
        if (!this.failed) await this.aborted("");
        break;
      }
      // pi's steering poll before the model's next step (nothing held for a message in the making).
      if (held.blocks.length === 0 && !this.failed && (await this.steer()) && this.scenario.steered !== undefined) {
        script = this.scenario.steered;
        i = -1;
        continue;
      }
      const step = script[i] as Step;
      // A confirm step sits between a message and the tool call it guards: look past it.
      let j = i + 1;
      while (script[j] !== undefined && "confirm" in (script[j] as Step)) j++;
      const next = script[j];
      const nextIsCall = isCallStep(next);
      const nextJoins = next !== undefined && "tool" in next && next.tool.parallel;
      if ("confirm" in step) {
        if (nextIsCall) this.pendingConfirm = step.confirm;
        else {
          await flushHeld();
          if (this.ctx.ui) await this.ctx.ui.confirm(step.confirm.title, step.confirm.message, step.confirm.timeout);
        }
        continue;
      }
      if ("thinking" in step) {
        held.blocks.push({ type: "thinking", thinking: step.thinking });
        continue;
      }
      if ("text" in step) {
        if (held.calls.length > 0) await flushHeld();
        held.blocks.push({ type: "text", text: step.text });
        held.usage = step.usage ?? held.usage;
        held.chunkDelayMs = step.chunkDelayMs ?? held.chunkDelayMs;
        if (!nextIsCall) await flushHeld();
        continue;
      }
      if ("tool" in step || "envelope" in step || "writeFile" in step) {
        if (held.calls.length > 0 && !("tool" in step && step.tool.parallel)) await flushHeld();
        const call = this.call(step);
        held.blocks.push(call.block);
        held.calls.push(call);
        held.usage = step.usage ?? held.usage;
        if (!nextJoins) {
          const envelope = held.calls.findLast((c) => c.envelope)?.envelope;
          await flushHeld();
          // The model's short closing message after report_phase.
          if (envelope && !this.failed) await this.assistant([{ type: "text", text: envelope.text }], "stop", envelope.usage);
        }
        continue;
      }
      await flushHeld();
      const code = await this.other(step);
      if (code !== undefined) return code;
    }
    await flushHeld();
    // Aborted while the last tools ran: the next model call is the aborted one.
    if (this.abortRequested() && !this.failed && this.runOpen && this.turnToolResults.length > 0) await this.aborted("");
    await this.closeRun();
    return undefined;
  }

  /** pi's steering poll: the first queued `steer` message becomes a user message of the run (a turn of its own); true when one came. */
  private async steer(): Promise<boolean> {
    const text = this.ctx.steering?.shift();
    if (text === undefined) return false;
    await this.nextTurn();
    await this.emit({ type: "queue_update", steering: [...(this.ctx.steering ?? [])], followUp: [] });
    const user = { role: "user", content: [{ type: "text", text }], timestamp: Date.now() };
    await this.emit({ type: "message_start", message: user });
    await this.emit({ type: "message_end", message: user });
    this.runMessages.push(user);
    return true;
  }

  private call(step: CallStep): Call {
    this.calls += 1;
    const confirm = this.pendingConfirm;
    this.pendingConfirm = undefined;
    return callOf(step, this.calls, confirm);
  }

  /** Steps after the run (json mode's `after`): an exit code to stop with, or undefined. */
  async afterRun(steps: Step[]): Promise<number | undefined> {
    for (const step of steps) {
      const code = await this.other(step);
      if (code !== undefined) return code;
    }
    return undefined;
  }

  /** Steps that are not part of a model answer. */
  private async other(step: Step): Promise<number | undefined> {
    if ("error" in step) {
      const message = step.error.message ?? `${step.error.status} standin error ${step.error.status}`;
      for (let n = 0; n < step.error.times && !this.failed; n++) await this.failedAttempt(message);
    } else if ("aborted" in step) {
      if (!this.failed) await this.aborted(step.partial);
    } else if ("model" in step) {
      const slash = step.model.indexOf("/");
      this.provider = step.model.slice(0, slash);
      this.model = step.model.slice(slash + 1);
    } else if ("oversize" in step) {
      if (!this.failed) await this.oversize(step.oversize);
    } else if ("raw" in step) {
      await writeOut(step.lf ? `${step.raw}\n` : step.raw);
    } else if ("stderr" in step) {
      process.stderr.write(step.stderr);
    } else if ("sleep" in step) {
      // A model call taking its time: an abort cuts it, and it ends "aborted".
      if ((await this.pause(step.sleep)) && !this.failed && this.runOpen) await this.aborted("");
    } else if ("exit" in step) {
      return step.exit;
    } else if ("signal" in step) {
      process.kill(process.pid, step.signal);
      await Bun.sleep(1_000);
    } else if ("closeStdout" in step) {
      await closeStdout();
    } else if ("hang" in step) {
      if (step.ignoreTerm) {
        process.removeAllListeners("SIGTERM");
        process.on("SIGTERM", () => {});
      }
      if (step.ignoreAbort || !this.ctx.abort) await new Promise(() => setInterval(() => {}, 1 << 30));
      if ((await this.pause(Number.POSITIVE_INFINITY)) && !this.failed && this.runOpen) await this.aborted("");
    } else if ("grandchild" in step) {
      await startGrandchild(step.grandchild);
    } else if ("shell" in step) {
      const run = Bun.spawnSync(["sh", "-c", step.shell], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      process.stderr.write(`${run.stdout.toString()}${run.stderr.toString()}`);
    } else if ("fetch" in step) {
      const said = await fetch(step.fetch, { signal: AbortSignal.timeout(3_000) }).then(
        (r) => `${r.status}`,
        (error: unknown) => `failed ${(error as Error).message}`,
      );
      process.stderr.write(`fetch ${step.fetch}: ${said}\n`);
    }
    return undefined;
  }

  /** A read of a huge file: its tool_execution_end line is `bytes` long, written in 1 MiB pieces. */
  private async oversize(bytes: number): Promise<void> {
    this.calls += 1;
    const id = `call_read_${this.calls}`;
    const args = { path: "big.txt" };
    await this.assistant([{ type: "toolCall", id, name: "read", arguments: args }], "toolUse");
    await this.emit({ type: "tool_execution_start", toolCallId: id, toolName: "read", args });
    if (this.ctx.json) {
      const head = `{"type":"tool_execution_end","toolCallId":"${id}","toolName":"read","result":{"content":[{"type":"text","text":"`;
      await writeHugeLine(bytes, head, `"}]},"isError":false}\n`);
    }
    const message = {
      role: "toolResult",
      toolCallId: id,
      toolName: "read",
      content: [{ type: "text", text: "(oversize)" }],
      isError: false,
      timestamp: Date.now(),
    };
    await this.toolResult(message);
  }
}
