// What the codex, gemini and opencode phases share around runPhase: the session
// declared or continued, the run folder, the envelope schema written for the
// agent and checked by agentport, the stderr handed to the reducer, the
// thread total of the earlier phases.
import type { PermissionPolicy } from "../core/permissions.ts";
import { closeSync, readSync, writeFileSync } from "node:fs";
import { openNamedFile } from "../io/named-file.ts";
import { join } from "node:path";
import type { PermissionMode } from "../core/agents.ts";
import type { AgentSetup } from "./setup.ts";
import type { Turn } from "./adapter.ts";
import { compileSchema, envelopeFromText, type EnvelopeCheck, type JsonSchema } from "../core/envelope.ts";
import type { EnvelopeInput } from "../core/envelope-verdict.ts";
import { envelopeInstructions } from "../core/instructions.ts";
import { priceOf, type Price } from "../core/prices.ts";
import type { Tokens } from "../core/verdict.ts";
import type { Ledger, PhaseRow, SessionRow } from "../io/ledger.ts";
import type { RunRequest } from "./phase.ts";

/** A one-shot run of codex or gemini: a new session, or `resume` of one the ledger knows. */
export interface StreamRunRequest extends RunRequest {
  resume?: SessionRow;
  permissionMode?: PermissionMode;
  /** --permissions FILE: answers every permission request the agent asks agentport (acp). */
  policy?: PermissionPolicy;
  /** The user's price for the model (agentport.json `prices`), else null: the cost stays null. */
  price?: Price | null;
  schema?: JsonSchema | null;
  lingerMs?: number;
  /** A completed run with refused requests fails (--fail-on-refusal). */
  failOnRefusal?: boolean;
  /** The installed agent's version, as its probe read it (argv.json). */
  agentVersion?: string | null;
  /** Everything after `--`, verbatim, after agentport's own arguments. */
  agentArgs?: string[];
}

/** argv.json's facts besides the command: the probed version, and the model as the agent is told it. */
export function aboutRun(request: StreamRunRequest, toldModel: string | null): { agentVersion: string | null; route: string | null } {
  return { agentVersion: request.agentVersion ?? null, route: toldModel };
}

/** What a codex, gemini or opencode run takes from the resolved request (never a raw flag) and the project config. */
export function streamOptions(setup: AgentSetup, turn: Turn) {
  const s = setup.settings;
  const model = setup.model ?? turn.resume?.model ?? undefined;
  const price = priceOf(model, setup.config?.config.prices)?.price ?? null;
  return {
    model,
    tools: setup.tools,
    thinking: setup.thinking,
    schema: setup.schema,
    permissionMode: s.permissionMode ?? undefined,
    appendSystemPrompt: setup.appendSystemPrompt,
    agentArgs: s.passThrough,
    request: setup.request,
    onArgv: setup.onArgv,
    price,
    lingerMs: setup.common.lingerMs,
    failOnRefusal: s.failOnRefusal,
    newSessionId: turn.sessionId,
    policy: setup.permissions ?? undefined,
  };
}

/** The prompt for an agent without a system-prompt flag: the envelope's instructions follow it. */
export function toldPrompt(request: Pick<StreamRunRequest, "prompt" | "schema">): string {
  return request.schema ? `${request.prompt}\n\n${envelopeInstructions(request.schema, { fenced: true })}` : request.prompt;
}

// stderr is read whole for the refusals it lists, up to this much.
const MAX_STDERR_BYTES = 16 * 1024 * 1024;

/** The head of the run's stderr.log, bounded. */
export function readStderr(runDir: string): string {
  let fd: number;
  try {
    fd = openNamedFile(join(runDir, "stderr.log"));
  } catch {
    return ""; // none kept, or no regular file: nothing to read
  }
  try {
    const buffer = new Uint8Array(MAX_STDERR_BYTES);
    const n = readSync(fd, buffer, 0, MAX_STDERR_BYTES, 0);
    return new TextDecoder().decode(buffer.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}

/** The tokens every earlier phase of the session recorded: the thread's total before this one. */
export async function earlierTokens(ledger: Ledger, sessionId: string): Promise<Tokens> {
  return recordedTokens(await ledger.phases(sessionId));
}

/** The tokens these phases recorded, summed (a phase without a figure adds nothing). */
export function recordedTokens(phases: readonly PhaseRow[]): Tokens {
  const total: Tokens = { input: 0, output: 0, cache_read: 0, cache_write: 0 };
  for (const phase of phases) {
    total.input += phase.tokens_in ?? 0;
    total.output += phase.tokens_out ?? 0;
    total.cache_read += phase.tokens_cache_read ?? 0;
    total.cache_write += phase.tokens_cache_write ?? 0;
  }
  return total;
}

/** The judge's envelope input: the final text's JSON, checked here (neither agent validates it itself). */
export function envelopeOfText(envelope: ReturnType<typeof envelopeCheck>, text: string | null): EnvelopeInput | null {
  return envelope === null ? null : { check: envelope.check, delivered: envelopeFromText(text), nudges: 0 };
}

/** The envelope check, with its schema written to the run folder for an agent that takes a file. */
export function envelopeCheck(
  schema: JsonSchema | null | undefined,
  runDir: string,
): { check: (value: unknown) => EnvelopeCheck; file: string } | null {
  if (!schema) return null;
  const compiled = compileSchema(schema);
  if (!compiled.ok) throw new Error(`the envelope schema: ${compiled.error}`);
  const file = join(runDir, "envelope.schema.json");
  writeFileSync(file, JSON.stringify(schema, null, 2));
  return { check: compiled.check, file };
}

/** What every stream agent's phase hands runPhase from its request unchanged: the prompt on stdin, the environment, the warnings, the driver's bounds, what the run folder keeps, --fail-on-refusal, --verbose's argv. */
export function phaseCommon(request: StreamRunRequest) {
  return {
    onArgv: request.onArgv,
    cwd: request.cwd,
    env: request.env,
    keepStream: request.keepStream,
    keepPrompt: request.keepPrompt,
    stdin: request.prompt,
    onWarning: request.onWarning,
    maxLineBytes: request.maxLineBytes,
    lingerMs: request.lingerMs,
    graceMs: request.graceMs,
    signal: request.signal,
    failOnRefusal: request.failOnRefusal,
  };
}
