// The fake pi's `--mode rpc`, as captured from pi 0.73.1 (ground truth §4-5):
// no header; one JSON command a line on stdin, answered by
// `{id?, type:"response", command, success, data?|error}`; an unknown command
// and an unparseable line are answered WITHOUT the id; events stream between
// responses; commands are not serialized (a turn runs while get_state is
// answered). The prompt's response comes before agent_start; the turn is the
// json mode's scripted run (PiRun), a `steer` queued for its next step; the 0.85 dialect adds `agent_settled`
// after a prompt's final events. Closing stdin exits 0 at once, a turn in
// flight lost.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Json } from "../../core/record.ts";
import { writeOut } from "../runtime.ts";
import { AbortState, type RunContext } from "./context.ts";
import { INVENTORY_TYPE, THINKING_LEVELS, type PiDialect } from "./dialect.ts";
import type { PiRun } from "./run.ts";
import { availableModels, lastSettings, modelObject, sessionStats } from "./rpc-state.ts";
import type { Scenario, Step } from "./scenarios.ts";
import { SessionStore } from "./session-store.ts";

const BUSY = "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.";

export interface RpcOptions {
  dialect: PiDialect;
  scenario: Scenario;
  run: PiRun;
  ctx: RunContext;
  thinkingLevel: string;
  extensionPaths: string[];
  inventory: Json;
  startProvider: string;
  startModel: string;
}

type Response = Json & { type: "response" };

const success = (id: unknown, command: string, data?: unknown): Response =>
  data === undefined ? { id, type: "response", command, success: true } : { id, type: "response", command, success: true, data };
const failure = (id: unknown, command: string, error: string): Response => ({ id, type: "response", command, success: false, error });
const out = (obj: Json): Promise<void> => writeOut(`${JSON.stringify(obj)}\n`);

export async function runRpc(o: RpcOptions): Promise<number> {
  const { ctx, run } = o;
  const abort = new AbortState();
  const dialogs = new Map<string, (answer: Json) => void>();
  ctx.abort = abort;
  ctx.steering = [];
  ctx.ui = {
    // pi's createDialogPromise: `{type, id, method, title, message, timeout?}`; only the answer (or the timeout) releases it.
    confirm(title, message, timeout) {
      const id = crypto.randomUUID();
      return new Promise<boolean>((resolve) => {
        let timer: Timer | undefined;
        if (timeout !== undefined)
          timer = setTimeout(() => {
            dialogs.delete(id);
            resolve(false);
          }, timeout);
        dialogs.set(id, (answer) => {
          if (timer !== undefined) clearTimeout(timer);
          resolve(answer.cancelled === true ? false : answer.confirmed === true);
        });
        void out({ type: "extension_ui_request", id, method: "confirm", title, message, ...(timeout === undefined ? {} : { timeout }) });
      });
    },
  };

  let provider = o.startProvider;
  let modelId = o.startModel;
  let thinkingLevel = o.thinkingLevel;
  let turn: Promise<void> | null = null;
  let prompts = 0;
  let inventorySent = false;

  const currentModel = (): Json =>
    availableModels(o).find((m) => m.provider === provider && m.id === modelId) ?? modelObject(provider, modelId);
  const setThinking = async (level: string): Promise<void> => {
    const reasoning = currentModel().reasoning === true;
    const next = reasoning ? (THINKING_LEVELS.includes(level) ? level : "off") : "off";
    if (next === thinkingLevel) return;
    thinkingLevel = next;
    ctx.session.append({ type: "thinking_level_change", thinkingLevel: next });
    await out({ type: "thinking_level_changed", level: next });
  };
  const useModel = (p: string, m: string): void => {
    provider = p;
    modelId = m;
    ctx.provider = p;
    ctx.model = m;
    run.setModel(p, m);
  };
  const stepsFor = (n: number): Step[] => {
    const turns = o.scenario.turns;
    if (turns === undefined || turns.length === 0) return o.scenario.steps;
    return turns[Math.min(n, turns.length - 1)] ?? [];
  };

  const startTurn = (message: string): void => {
    const steps = stepsFor(prompts);
    prompts += 1;
    turn = (async () => {
      if (o.dialect === "0.85" && !inventorySent && o.extensionPaths.length > 0) {
        inventorySent = true;
        const entry = ctx.session.append({ type: "custom", customType: INVENTORY_TYPE, data: o.inventory });
        await out({ type: "entry_appended", entry });
      }
      const code = await run.prompt(message, steps);
      if (code !== undefined) process.exit(code);
      if (o.dialect === "0.85") await out({ type: "agent_settled" });
    })().finally(() => {
      turn = null;
      abort.reset();
    });
  };

  const handle = async (cmd: Json): Promise<Response | undefined> => {
    const id = cmd.id;
    const type = String(cmd.type);
    switch (type) {
      case "prompt": {
        if (turn !== null) return failure(id, "prompt", BUSY);
        if (typeof cmd.message !== "string") return failure(id, "prompt", "message must be a string");
        await out(success(id, "prompt"));
        startTurn(cmd.message);
        return undefined;
      }
      case "steer": {
        // pi queues it (queue_update first, then the answer), idle or not; the model gets it before its next call.
        if (typeof cmd.message !== "string") return failure(id, "steer", "message must be a string");
        ctx.steering?.push(cmd.message);
        await out({ type: "queue_update", steering: [...(ctx.steering ?? [])], followUp: [] });
        return success(id, "steer");
      }
      case "abort": {
        // The answer comes once the turn is over (after agent_end); a pending dialog keeps both waiting.
        if (turn !== null) {
          const running: Promise<void> = turn;
          abort.request();
          await running;
        }
        return success(id, "abort");
      }
      case "get_state": {
        const store = ctx.session;
        return success(id, "get_state", {
          model: currentModel(),
          thinkingLevel,
          isStreaming: turn !== null,
          isCompacting: false,
          steeringMode: "one-at-a-time",
          followUpMode: "one-at-a-time",
          sessionFile: store.persist ? store.file : undefined,
          sessionId: store.id,
          autoCompactionEnabled: true,
          messageCount: store.entries.filter((e) => e.type === "message").length,
          pendingMessageCount: ctx.steering?.length ?? 0,
        });
      }
      case "get_session_stats":
        return success(id, "get_session_stats", sessionStats(ctx.session, currentModel()));
      case "get_messages":
        return success(id, "get_messages", { messages: ctx.session.entries.filter((e) => e.type === "message").map((e) => e.message) });
      case "get_available_models":
        return success(id, "get_available_models", { models: availableModels(o) });
      case "set_model": {
        const found = availableModels(o).find((m) => m.provider === cmd.provider && m.id === cmd.modelId);
        if (!found) return failure(id, "set_model", `Model not found: ${String(cmd.provider)}/${String(cmd.modelId)}`);
        useModel(String(found.provider), String(found.id));
        ctx.session.append({ type: "model_change", provider, modelId });
        // A reasoning model gets pi's default level; a plain one has none.
        if (found.reasoning === true && thinkingLevel === "off") await setThinking("medium");
        else if (found.reasoning !== true && thinkingLevel !== "off") await setThinking("off");
        return success(id, "set_model", found);
      }
      case "set_thinking_level":
        await setThinking(String(cmd.level));
        return success(id, "set_thinking_level");
      case "clone": {
        const store = ctx.session;
        const leaf = store.leaf;
        if (leaf === null) return failure(id, "clone", "Cannot clone session: no current entry selected");
        // Before the first prompt the entries live in memory only: pi cannot find the leaf (d5).
        if (!store.hasMessages) return failure(id, "clone", `Entry ${leaf} not found`);
        ctx.session = SessionStore.cloneOf(store);
        ctx.steering = [];
        return success(id, "clone", { cancelled: false });
      }
      case "switch_session": {
        if (typeof cmd.sessionPath !== "string") return failure(id, "switch_session", "sessionPath must be a string");
        const store = SessionStore.open(cmd.sessionPath, undefined);
        if (!existsSync(store.cwd)) return failure(id, "switch_session", `Stored session working directory does not exist: ${store.cwd}`);
        ctx.session = store;
        ctx.steering = [];
        if (process.cwd() !== store.cwd) process.chdir(store.cwd);
        const saved = lastSettings(store);
        if (saved.provider && saved.model) useModel(saved.provider, saved.model);
        if (saved.thinking) thinkingLevel = saved.thinking;
        return success(id, "switch_session", { cancelled: false });
      }
      case "new_session": {
        const current = ctx.session;
        const store = SessionStore.create(current.cwd, current.file ? join(current.file, "..") : current.dir);
        ctx.session = store;
        ctx.steering = [];
        store.append({ type: "model_change", provider, modelId });
        store.append({ type: "thinking_level_change", thinkingLevel });
        return success(id, "new_session", { cancelled: false });
      }
      default:
        // pi answers an unknown command without its id.
        return failure(undefined, type, `Unknown command: ${type}`);
    }
  };

  const handleLine = async (line: string): Promise<void> => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch (error) {
      await out(failure(undefined, "parse", `Failed to parse command: ${(error as Error).message}`));
      return;
    }
    const cmd = (parsed !== null && typeof parsed === "object" ? parsed : {}) as Json;
    if (cmd.type === "extension_ui_response") {
      // An unknown id is ignored, as pi does.
      const answer = typeof cmd.id === "string" ? dialogs.get(cmd.id) : undefined;
      if (answer) {
        dialogs.delete(cmd.id as string);
        answer(cmd);
      }
      return;
    }
    try {
      const response = await handle(cmd);
      if (response) await out(response);
    } catch (error) {
      await out(failure(cmd.id, String(cmd.type), (error as Error).message));
    }
  };

  const reader = Bun.stdin.stream().getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffered += decoder.decode(value, { stream: true });
    for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
      const line = buffered.slice(0, nl).replace(/\r$/, "");
      buffered = buffered.slice(nl + 1);
      // Not serialized: a command is answered while a turn (or an abort waiting for it) goes on.
      if (line.trim()) void handleLine(line);
    }
  }
  // stdin closed: pi shuts down at once, a turn in flight is lost.
  process.exit(0);
}
