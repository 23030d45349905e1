// A pi phase (`pi --mode json`): the session named before the call, the
// envelope tool and inventory through agentport's extension, the verdict from
// the stream (json mode exits 0 even when the run failed).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compileSchema, type JsonSchema } from "../core/envelope.ts";
import type { Env } from "../core/env.ts";
import { judgePi } from "../core/judge.ts";
import { decide } from "../core/outcome.ts";
import type { PiCapabilities } from "../core/pi/capabilities.ts";
import { sessionNaming } from "../core/pi/capabilities.ts";
import { ENVELOPE_TOOL, PiReducer, readInventory } from "../core/pi/reducer.ts";
import type { ProgressSink } from "../core/progress.ts";
import { Supervisor, type SupervisorOptions } from "../core/supervisor.ts";
import type { Ledger } from "../io/ledger.ts";
import { makeRunDir } from "../io/paths.ts";
import { piArgv, route } from "./pi-argv.ts";
import { writeExtension } from "./pi-extension.ts";
import { runPhase, type RunOutcome } from "./phase.ts";

export interface PiRunRequest {
  bin: string;
  caps: PiCapabilities;
  prompt: string;
  cwd: string;
  home: string;
  /** Absolute. */
  sessionDir: string;
  /** Continue this session instead of starting one. */
  resume?: { id: string; sessionFile: string | null };
  model?: string;
  gateway: string;
  direct: boolean;
  thinking?: string;
  tools?: string[];
  /** The envelope's JSON Schema when one is expected, else null. */
  schema: JsonSchema | null;
  requireExt: string[];
  /** Timeout, stall, budget and loop detection. */
  supervision: SupervisorOptions;
  onWarning?: (text: string) => void;
  graceMs?: number;
  maxLineBytes: number;
  env: Env;
  profile?: string[];
  progress?: ProgressSink;
  signal?: AbortSignal;
}

/** A new session file named by agentport: pi takes the id and cwd of a header it finds there. */
export function newSessionFile(sessionDir: string, id: string, cwd: string, now = new Date()): string {
  mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
  const stamp = now.toISOString().replace(/[:.]/g, "-");
  const file = join(sessionDir, `${stamp}_${id}.jsonl`);
  const header = { type: "session", version: 3, id, timestamp: now.toISOString(), cwd };
  writeFileSync(file, `${JSON.stringify(header)}\n`, { flag: "wx", mode: 0o600 });
  return file;
}

export function runPi(ledger: Ledger, request: PiRunRequest): Promise<RunOutcome> {
  const id = request.resume?.id ?? crypto.randomUUID();
  const runDir = makeRunDir(request.home, id);
  const naming = sessionNaming(request.caps);
  let sessionFile = request.resume?.sessionFile ?? null;
  if (request.resume === undefined && naming === "session-file") sessionFile = newSessionFile(request.sessionDir, id, request.cwd);
  mkdirSync(request.sessionDir, { recursive: true, mode: 0o700 });

  const wantsExtension = request.schema !== null || request.requireExt.length > 0;
  const extraEnv: Record<string, string> = {};
  const extensions: string[] = [];
  const inventoryFile = join(runDir, "inventory.json");
  if (wantsExtension) {
    extensions.push(writeExtension(join(request.home, "extensions")));
    extraEnv.AGENTPORT_INVENTORY_FILE = inventoryFile;
    extraEnv.AGENTPORT_PI_VERSION = request.caps.version;
    extraEnv.AGENTPORT_ENVELOPE_TOOL = ENVELOPE_TOOL;
  }
  let check = null;
  if (request.schema !== null) {
    const schemaFile = join(runDir, "envelope.schema.json");
    writeFileSync(schemaFile, JSON.stringify(request.schema, null, 2));
    extraEnv.AGENTPORT_ENVELOPE_SCHEMA = schemaFile;
    const compiled = compileSchema(request.schema);
    if (!compiled.ok) throw new Error(`the envelope schema: ${compiled.error}`);
    check = compiled.check;
  }

  const supervisor = new Supervisor(request.supervision);
  const reducer = new PiReducer({
    cwd: request.cwd,
    emit: request.progress,
    loop: supervisor.loop,
    // pi's own id, bound as soon as the header arrives (it is ours when pi honoured the file we named).
    onHeader: (piId) => {
      if (piId !== id) ledger.bindAgentSession(id, piId, sessionFile ?? undefined);
    },
  });
  return runPhase(ledger, {
    session: {
      id,
      agent: "pi",
      cwd: request.cwd,
      model: request.model ?? null,
      sessionFile,
      sessionDir: request.sessionDir,
      profile: request.profile?.join(",") ?? null,
      isNew: request.resume === undefined,
    },
    kind: request.resume === undefined ? "run" : "resume",
    argv: piArgv({
      bin: request.bin,
      caps: request.caps,
      mode: "json",
      sessionDir: request.sessionDir,
      sessionId: id,
      sessionFile,
      model: request.model,
      gateway: request.gateway,
      direct: request.direct,
      thinking: request.thinking,
      tools: request.tools,
      extensions,
      envelopeTool: request.schema !== null ? ENVELOPE_TOOL : undefined,
    }),
    cwd: request.cwd,
    env: { ...request.env, ...extraEnv },
    stdin: request.prompt,
    runDir,
    reducer,
    judge: (result) => {
      const reading = reducer.reduction();
      if (reading.inventory === null && existsSync(inventoryFile)) {
        try {
          reading.inventory = readInventory(JSON.parse(readFileSync(inventoryFile, "utf8")));
        } catch {
          // An unreadable inventory proves nothing: the judge fails closed.
        }
      }
      const judged = judgePi(
        reading,
        {
          requireExt: request.requireExt,
          route: request.model ? route(request.model, request.gateway, request.direct) : null,
          envelope: check,
          envelopeTool: ENVELOPE_TOOL,
        },
        result,
      );
      const decided = decide("pi", judged, result);
      decided.verdict.envelope = judged.envelope;
      return decided;
    },
    maxLineBytes: request.maxLineBytes,
    supervisor,
    onWarning: request.onWarning,
    graceMs: request.graceMs,
    signal: request.signal,
  });
}
