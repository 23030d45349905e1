// A pi phase (`pi --mode json`): the session named before the call, the
// envelope tool and inventory through agentport's extension, the verdict from
// the stream (json mode exits 0 even when the run failed). With nudges, a turn
// that ended without its envelope is followed by short resumes of the same
// session asking only for it (phases of kind "nudge").
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compileSchema, envelopeFromTool, type EnvelopeCheck, type JsonSchema } from "../../core/envelope.ts";
import { appendedSystemPrompt, envelopeInstructions } from "../../core/instructions.ts";
import type { PiCapabilities } from "../../core/pi/capabilities.ts";
import { unmetRequirement } from "../../core/pi/requirements.ts";
import { sessionNaming } from "../../core/pi/capabilities.ts";
import { ENVELOPE_TOOL, PiReducer, readInventory, type Inventory } from "../../core/pi/reducer.ts";
import { Supervisor } from "../../core/supervisor.ts";
import type { Ledger } from "../../io/ledger.ts";
import { recordingProgress } from "../../io/run-folder.ts";
import { makeRunDir } from "../../io/paths.ts";
import { piThinking, piTools } from "../../core/translate.ts";
import { piArgv, route } from "../../core/pi/argv.ts";
import { nudgePrompt, withNudges, type Attempt } from "../nudge.ts";
import { writeExtension } from "./extension.ts";
import { declaredFrom, runPhase, type RunOutcome, type RunRequest } from "../phase.ts";

export interface PiRunRequest extends RunRequest {
  caps: PiCapabilities;
  /** Absolute. */
  sessionDir: string;
  /** Continue this session instead of starting one. */
  resume?: { id: string; sessionFile: string | null };
  gateway: string;
  direct: boolean;
  /** The envelope's JSON Schema when one is expected, else null. */
  schema: JsonSchema | null;
  requireExt: string[];
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
  const id = request.resume?.id ?? request.newSessionId ?? crypto.randomUUID();
  const naming = sessionNaming(request.caps);
  let sessionFile = request.resume?.sessionFile ?? null;
  if (request.resume === undefined && naming === "session-file") sessionFile = newSessionFile(request.sessionDir, id, request.cwd);
  mkdirSync(request.sessionDir, { recursive: true, mode: 0o700 });
  const nudges = request.nudges ?? 0;
  const turn = async (t: Attempt): Promise<RunOutcome> => {
    const { problem } = t;
    if (problem !== null)
      request.onWarning?.(`pi: the turn ended without its envelope (${problem.message}); nudge ${t.nudge} of ${nudges}`);
    // A nudge continues the session: its file as the ledger knows it now (pi may have bound another).
    if (problem !== null) sessionFile = (await ledger.getSession(id))?.session_file ?? sessionFile;
    return await piTurn(ledger, request, {
      id,
      sessionFile,
      isNew: problem === null && request.resume === undefined,
      kind: problem === null ? (request.resume === undefined ? "run" : "resume") : "nudge",
      prompt: problem === null ? request.prompt : nudgePrompt({ tool: ENVELOPE_TOOL }, problem),
      nudgesSpent: t.last ? t.nudge : 0,
    });
  };
  return withNudges(nudges, request.signal, turn);
}

interface PiTurn {
  id: string;
  sessionFile: string | null;
  isNew: boolean;
  kind: string;
  prompt: string;
  /** When this is the last turn after nudges: their number, for the failure; else 0. */
  nudgesSpent: number;
}

async function piTurn(ledger: Ledger, request: PiRunRequest, t: PiTurn): Promise<RunOutcome> {
  const { id, sessionFile } = t;
  const runDir = makeRunDir(request.home, id);
  const wantsExtension = request.schema !== null || request.requireExt.length > 0;
  const instructions = request.schema === null ? null : envelopeInstructions(request.schema, { tool: ENVELOPE_TOOL });
  const extraEnv: Record<string, string> = {};
  const extensions: string[] = [];
  const inventoryFile = join(runDir, "inventory.json");
  if (wantsExtension) {
    extensions.push(writeExtension(join(request.home, "extensions")));
    extraEnv.AGENTPORT_INVENTORY_FILE = inventoryFile;
    extraEnv.AGENTPORT_PI_VERSION = request.caps.version;
    extraEnv.AGENTPORT_ENVELOPE_TOOL = ENVELOPE_TOOL;
  }
  let check: ((value: unknown) => EnvelopeCheck) | null = null;
  if (request.schema !== null) {
    const schemaFile = join(runDir, "envelope.schema.json");
    writeFileSync(schemaFile, JSON.stringify(request.schema, null, 2));
    extraEnv.AGENTPORT_ENVELOPE_SCHEMA = schemaFile;
    extraEnv.AGENTPORT_ENVELOPE_DESCRIPTION = instructions ?? "";
    const compiled = compileSchema(request.schema);
    if (!compiled.ok) throw new Error(`the envelope schema: ${compiled.error}`);
    check = compiled.check;
  }

  const supervisor = new Supervisor(request.supervision);
  let binding: Promise<unknown> = Promise.resolve(null);
  const reducer = new PiReducer({
    cwd: request.cwd,
    emit: recordingProgress(runDir, { sessionId: id, agent: "pi" }, request.progress),
    loop: supervisor.loop,
    // pi's own id, bound as soon as the header arrives (it is ours when pi honoured the file we named);
    // the write is awaited once the phase is over, its failure then thrown.
    onHeader: (piId) => {
      if (piId !== id)
        binding = ledger.bindAgentSession(id, piId, sessionFile ?? undefined).then(
          () => null,
          (error: unknown) => error,
        );
    },
  });
  const requirements = {
    requireExt: request.requireExt,
    route: request.model ? route(request.model, request.gateway, request.direct) : null,
  };
  const outcome = await runPhase(ledger, {
    session: {
      id,
      agent: "pi",
      ...declaredFrom(request),
      sessionFile,
      sessionDir: request.sessionDir,
      isNew: t.isNew,
    },
    kind: t.kind,
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
      thinking: piThinking(request.thinking),
      tools: request.tools && piTools(request.tools),
      extensions,
      envelopeTool: request.schema !== null ? ENVELOPE_TOOL : undefined,
      appendSystemPrompt: appendedSystemPrompt(request.appendSystemPrompt, instructions),
      passThrough: request.extras?.passThrough,
    }),
    failOnRefusal: request.extras?.failOnRefusal,
    onArgv: request.onArgv,
    cwd: request.cwd,
    env: { ...request.env, ...extraEnv },
    stdin: t.prompt,
    runDir,
    about: { agentVersion: request.caps.version, route: requirements.route },
    keepStream: request.keepStream,
    keepPrompt: request.keepPrompt,
    reducer,
    evidence: () => {
      const reading = reducer.reduction();
      // The extension's inventory file, when the stream carried none (pi 0.73.1 has no entry for it).
      const inventory = reading.inventory ?? inventoryFrom(inventoryFile);
      return {
        reduction: reading,
        requirement: unmetRequirement({ ...reading, inventory }, requirements),
        envelope: { check, delivered: envelopeFromTool(ENVELOPE_TOOL, reading.envelope, reading.envelopeError), nudges: t.nudgesSpent },
      };
    },
    maxLineBytes: request.maxLineBytes,
    supervisor,
    onWarning: request.onWarning,
    graceMs: request.graceMs,
    signal: request.signal,
  });
  const unbound = await binding;
  if (unbound !== null) throw unbound;
  return outcome;
}

/** An inventory file agentport's extension wrote; an unreadable one proves nothing (the requirement fails closed). */
export function inventoryFrom(file: string | undefined): Inventory | null {
  if (file === undefined || !existsSync(file)) return null;
  try {
    return readInventory(JSON.parse(readFileSync(file, "utf8")));
  } catch {
    return null;
  }
}

/**
 * A person taking over a pi session: `pi --session <file>` on the terminal (in
 * the birth folder), or, when pi named the session itself, `--session-id` in
 * its session folder.
 */
export function piInteractiveArgv(request: {
  bin: string;
  caps: PiCapabilities;
  sessionId: string;
  sessionFile: string | null;
  sessionDir: string | null;
}): string[] {
  if (request.sessionFile !== null) return [request.bin, "--session", request.sessionFile];
  if (request.caps.flags["--session-id"]) {
    const argv = [request.bin, "--session-id", request.sessionId];
    if (request.sessionDir !== null && request.caps.flags["--session-dir"]) argv.push("--session-dir", request.sessionDir);
    return argv;
  }
  throw new Error(`session ${request.sessionId}: no pi session file is known, and this pi has no --session-id`);
}
