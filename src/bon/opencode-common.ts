// What bon's two opencode agents share: the envelope (a fenced JSON block
// ending the final message, its instructions appended to the brief since
// opencode has no flag for a system prompt), the environment of the batch's
// processes, and a judged verdict as the batch's turn.
import { realpathSync } from "node:fs";
import { compileSchema, type EnvelopeCheck } from "../core/envelope.ts";
import { envelopeInstructions } from "../core/instructions.ts";
import type { Decided } from "../core/judge.ts";
import { secrets } from "../core/redact.ts";
import type { BatchPlace } from "./agents.ts";
import type { BonOptions } from "./options.ts";
import { noTurn, turnOf, type AgentSession, type Turned } from "./sessions.ts";
import type { EnvelopeDelivery } from "../core/instructions.ts";

export const OPENCODE_DELIVERY = { fenced: true } as const;

export const NOT_STARTED: Turned = noTurn("interrupted before the turn started", "interrupted");

export class OpencodeEnvelope {
  readonly check: (value: unknown) => EnvelopeCheck;
  private readonly instructions: string;

  constructor(schema: BonOptions["schema"]) {
    const compiled = compileSchema(schema);
    if (!compiled.ok) throw new Error(`the envelope schema: ${compiled.error}`);
    this.check = compiled.check;
    this.instructions = envelopeInstructions(schema, OPENCODE_DELIVERY);
  }

  /** The brief, then how to hand the envelope over. */
  prompt(text: string): string {
    return `${text}\n\n${this.instructions}`;
  }
}

/** What both of bon's opencode agents are: their name, their envelope, their environment. */
export abstract class OpencodeAgent {
  readonly name = "opencode";
  readonly sessionDir = null;
  protected readonly envelope: OpencodeEnvelope;

  constructor(
    protected readonly o: BonOptions,
    protected readonly batch: BatchPlace,
  ) {
    this.envelope = new OpencodeEnvelope(o.schema);
  }

  agentOf(): "opencode" {
    return "opencode";
  }

  delivery(): EnvelopeDelivery {
    return OPENCODE_DELIVERY;
  }

  get interrupted(): boolean {
    return this.o.signal?.aborted === true;
  }

  declarePrime(): AgentSession {
    // opencode names its session once it runs.
    return { sessionId: null, sessionFile: null };
  }

  /** The environment of the batch's opencode processes (a phase's label for one-shot runs, "serve" for the server). */
  protected env(label: string): Record<string, string | undefined> {
    return { ...this.o.env, AGENTPORT_PHASE: label, AGENTPORT_RUN_ID: this.batch.id, ...this.batch.gitCeiling };
  }
}

/** The judge's decision as a turn of the batch (redacted first). */
export function turnedOf(decided: Decided): Turned {
  return turnOf(secrets.verdict(decided.verdict));
}

/** The same folder, symlinks resolved. */
export function sameFolder(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return a === b;
  }
}
