// The fake ACP agent (`agentport fake-acp`): speaks ACP v1 on stdin/stdout as
// gemini --acp and opencode acp do (ground truth acp-gemini-0.61.0-opencode-1.18.33),
// each prompt scripted by a scenario (./scenario.ts). It ends when its stdin
// closes. Every message it receives is logged to $AGENTPORT_FAKE_LOG (method
// and id only), so a test can see a session/cancel arrive.
import { appendFileSync, writeFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { logInvocation } from "../claude.ts";
import { missingDeclaration } from "../ledger-check.ts";
import { resolveScenario, writeOut } from "../runtime.ts";
import { ACP_SCENARIOS, AcpScenarioSchema, type AcpScenario, type AcpStep } from "./scenario.ts";

export const FAKE_ACP_VERSION = "1.0.0";
type Msg = Record<string, any>;

class FakeAcp {
  private nextId = 0;
  private readonly waiting = new Map<number, (msg: Msg) => void>();
  private cancelled: (() => void) | null = null;
  private cwd = process.cwd();
  private sessionId: string | null = null;
  private loaded = false;
  private mode: string | null = null;

  constructor(private readonly scenario: AcpScenario) {}

  private send(msg: Msg): Promise<void> {
    return writeOut(`${JSON.stringify({ jsonrpc: "2.0", ...msg })}\n`);
  }

  private update(update: Msg): Promise<void> {
    return this.send({ method: "session/update", params: { sessionId: this.sessionId, update } });
  }

  private ask(method: string, params: Msg): Promise<Msg> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      void this.send({ id, method, params });
    });
  }

  async receive(msg: Msg): Promise<void> {
    const log = process.env.AGENTPORT_FAKE_LOG;
    if (log) appendFileSync(log, `${JSON.stringify({ fake: "fake-acp", method: msg.method ?? null, id: msg.id ?? null })}\n`);
    if (msg.method === undefined) {
      this.waiting.get(msg.id)?.(msg);
      this.waiting.delete(msg.id);
      return;
    }
    const p = msg.params ?? {};
    switch (msg.method) {
      case "initialize":
        await this.send({
          id: msg.id,
          result: {
            protocolVersion: 1,
            agentInfo: { name: "fake-acp", title: "Fake ACP", version: FAKE_ACP_VERSION },
            agentCapabilities: { loadSession: this.scenario.loadSession, promptCapabilities: { embeddedContext: true } },
            authMethods: [],
          },
        });
        return;
      case "session/new": {
        this.cwd = p.cwd;
        this.sessionId = `fake-acp-${crypto.randomUUID()}`;
        this.mode = this.scenario.modes?.current ?? null;
        await this.send({ id: msg.id, result: { sessionId: this.sessionId, ...this.modes() } });
        return;
      }
      case "session/set_mode":
        if (!this.scenario.modes?.available.includes(p.modeId)) {
          await this.send({ id: msg.id, error: { code: -32602, message: `Invalid params: no mode ${p.modeId}` } });
          return;
        }
        this.mode = p.modeId;
        await this.send({ id: msg.id, result: {} });
        await this.update({ sessionUpdate: "current_mode_update", currentModeId: p.modeId });
        return;
      case "session/load":
        if (!this.scenario.loadSession || typeof p.sessionId !== "string" || !p.sessionId.startsWith("fake-acp-")) {
          await this.send({ id: msg.id, error: { code: -32603, message: "Internal error", data: { details: "No such session." } } });
          return;
        }
        this.cwd = p.cwd;
        this.sessionId = p.sessionId;
        this.loaded = true;
        this.mode = this.scenario.modes?.current ?? null;
        await this.send({ id: msg.id, result: { ...this.modes() } });
        return;
      case "session/prompt":
        void this.prompt(msg.id);
        return;
      case "session/cancel":
        this.cancelled?.();
        return;
      default:
        if (msg.id !== undefined) await this.send({ id: msg.id, error: { code: -32601, message: `Method not found: ${msg.method}` } });
    }
  }

  private modes(): Msg {
    const modes = this.scenario.modes;
    return modes === undefined
      ? {}
      : { modes: { currentModeId: this.mode, availableModes: modes.available.map((id) => ({ id, name: id })) } };
  }

  private async prompt(id: number): Promise<void> {
    const denied = this.sessionId === null ? null : missingDeclaration(this.sessionId);
    if (denied !== null) process.stderr.write(`fake-acp: ${denied}\n`);
    const steps = this.loaded && this.scenario.resumed ? this.scenario.resumed : this.scenario.steps;
    let stop = "end_turn";
    for (const step of steps) {
      const end = await this.step(step);
      if (end === null) return;
      if (typeof end === "object") {
        await this.send({ id, error: end });
        return;
      }
      if (end !== undefined) {
        stop = end;
        break;
      }
    }
    const tokens = this.scenario.tokens;
    await this.send({
      id,
      result: {
        stopReason: stop,
        ...(tokens ? { usage: { inputTokens: tokens.input, outputTokens: tokens.output, totalTokens: tokens.input + tokens.output } } : {}),
      },
    });
  }

  /** undefined: go on; a string: the stopReason; an object: the prompt's error; null: no answer at all. */
  private async step(step: AcpStep): Promise<string | { code: number; message: string } | null | undefined> {
    if ("text" in step) {
      const half = Math.ceil(step.text.length / 2);
      for (const part of [step.text.slice(0, half), step.text.slice(half)].filter(Boolean))
        await this.update({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: part } });
    } else if ("tool" in step) {
      const toolCallId = `call_${this.nextId++}`;
      const locations = step.tool.path ? [{ path: join(this.cwd, step.tool.path) }] : [];
      await this.update({
        sessionUpdate: "tool_call",
        toolCallId,
        title: step.tool.title,
        kind: step.tool.kind,
        status: "pending",
        locations,
      });
      await this.update({ sessionUpdate: "tool_call_update", toolCallId, status: step.tool.failed ? "failed" : "completed" });
    } else if ("permission" in step) {
      const toolCallId = `call_${this.nextId}`;
      const asked = step.permission.path;
      const path = asked.startsWith("file:") ? fileURLToPath(asked) : isAbsolute(asked) ? asked : `${this.cwd}/${asked}`;
      if (this.mode !== null && !this.scenario.modes?.asks.includes(this.mode)) {
        writeFileSync(path, "made by the fake ACP agent, unasked\n");
        await this.update({
          sessionUpdate: "tool_call",
          toolCallId,
          title: step.permission.title,
          kind: step.permission.kind,
          status: "completed",
        });
        return undefined;
      }
      const options = [
        { optionId: "proceed_always", name: "Allow for this session", kind: "allow_always" },
        { optionId: "proceed_once", name: "Allow", kind: "allow_once" },
        { optionId: "cancel", name: "Reject", kind: "reject_once" },
      ];
      const answer = await this.ask("session/request_permission", {
        sessionId: this.sessionId,
        options,
        toolCall: {
          toolCallId,
          status: "pending",
          title: step.permission.title,
          kind: step.permission.kind,
          locations: (step.permission.locations ?? [asked.startsWith("file:") ? asked : path]).map((at) => ({ path: at })),
        },
      });
      const chosen = answer.result?.outcome?.optionId;
      if (chosen === "proceed_once" || chosen === "proceed_always") {
        // As an agent would: the OS resolves the path (symlinks, `..`); a write that cannot land fails the call.
        const wrote = (() => {
          try {
            writeFileSync(path, "made by the fake ACP agent\n");
            return true;
          } catch {
            return false;
          }
        })();
        await this.update({ sessionUpdate: "tool_call_update", toolCallId, status: wrote ? "completed" : "failed" });
      } else {
        await this.update({ sessionUpdate: "tool_call_update", toolCallId, status: "failed" });
      }
    } else if ("usage" in step) {
      const { used, size, cost } = step.usage;
      await this.update({
        sessionUpdate: "usage_update",
        used,
        size,
        ...(cost === undefined ? {} : { cost: { amount: cost, currency: "USD" } }),
      });
    } else if ("plan" in step) {
      await this.update({
        sessionUpdate: "plan",
        entries: step.plan.map((content) => ({ content, status: "pending", priority: "medium" })),
      });
    } else if ("read" in step) {
      const answer = await this.ask("fs/read_text_file", {
        sessionId: this.sessionId,
        path: isAbsolute(step.read) ? step.read : join(this.cwd, step.read),
      });
      await this.update({
        sessionUpdate: "agent_message_chunk",
        content: { type: "text", text: answer.error ? `read refused: ${answer.error.message}` : `read: ${answer.result?.content}` },
      });
    } else if ("hang" in step) {
      await new Promise<void>((resolve) => (this.cancelled = step.ignoreCancel ? () => {} : resolve));
      return "cancelled";
    } else if ("crash" in step) {
      process.kill(process.pid, "SIGKILL");
      return null;
    } else if ("raw" in step) {
      await writeOut(`${step.raw}\n`);
    } else if ("stderr" in step) {
      process.stderr.write(step.stderr);
    } else if ("sleep" in step) {
      await Bun.sleep(step.sleep);
    } else if ("error" in step) {
      return step.error;
    } else if ("stop" in step) {
      return step.stop;
    }
    return undefined;
  }
}

export async function fakeAcp(argv: string[], scenarioSpec: string | undefined): Promise<number> {
  const scenario = await resolveScenario(scenarioSpec ?? "text", ACP_SCENARIOS, AcpScenarioSchema);
  logInvocation("fake-acp", argv);
  const agent = new FakeAcp(scenario);
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of Bun.stdin.stream()) {
    pending += decoder.decode(chunk, { stream: true });
    let nl = pending.indexOf("\n");
    while (nl >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line) {
        try {
          await agent.receive(JSON.parse(line));
        } catch {
          process.stderr.write("fake-acp: a line that is not JSON\n");
        }
      }
      nl = pending.indexOf("\n");
    }
  }
  // stdin closed: the client is gone, as the real agents end.
  return 0;
}
