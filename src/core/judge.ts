// The judge of a pi phase (the seed's `_judge`): what the stream says, weighed
// against what was asked. Pure; returns a value, never throws.
//
// In order: a broken stream; the required extensions, proven by the inventory
// (fail closed when it is missing); the envelope first, when one is expected;
// a stopReason of error/aborted; a non-zero exit with no text; no answer at
// all; and last an observed model that differs from the requested route.
import type { EnvelopeCheck } from "./envelope.ts";
import type { ProcessOutcome } from "./outcome.ts";
import type { Inventory, PiReading } from "./pi/reducer.ts";
import type { Reduction } from "./reduction.ts";
import { clean } from "./text.ts";

export interface JudgeRequest {
  /** Extensions that must be proven loaded; empty means no requirement. */
  requireExt: string[];
  /** The route the model was requested as (`provider/id`), or null. */
  route: string | null;
  /** The envelope validator when an envelope is expected, else null. */
  envelope: ((value: unknown) => EnvelopeCheck) | null;
  envelopeTool: string;
}

export interface Judged extends Reduction {
  envelope: Record<string, unknown> | null;
}

function tail(stderr: string): string {
  return clean(stderr.split("\n").filter((l) => l.trim()).slice(-3).join(" | "), 240);
}

function missingExtensions(required: string[], inventory: Inventory | null): string | null {
  if (required.length === 0) return null;
  if (inventory === null) {
    return `required extensions not proven: pi reported no inventory (needed: ${required.join(", ")}); was the agentport extension loaded?`;
  }
  const missing = required.filter((name) => !inventory.extensions.includes(name));
  if (missing.length === 0) return null;
  return `required extensions missing: ${missing.join(", ")} (pi ${inventory.piVersion || "?"} loaded: ${inventory.extensions.join(", ") || "none"})`;
}

export function judgePi(reading: PiReading, request: JudgeRequest, proc: ProcessOutcome): Judged {
  const fail = (failure: string): Judged => ({ ...reading, failure: clean(failure, 600), text: null, envelope: null });
  if (reading.failure !== null) return fail(reading.failure);
  if (reading.assistantMessages === 0 && proc.stoppedBy === null) {
    // pi printed its header (or nothing) and no answer: a rejected flag, a
    // y/N question answered by EOF, an empty prompt.
    const evidence = tail(proc.stderrTail);
    const exit = proc.exitCode !== null ? `exit code ${proc.exitCode}` : proc.signal !== null ? `signal ${proc.signal}` : "the stream ended";
    return fail(`pi: no answer (${exit})${evidence ? `: ${evidence}` : ""}`);
  }

  const extensions = missingExtensions(request.requireExt, reading.inventory);
  if (extensions !== null) return fail(`pi: ${extensions}`);

  let envelope: Record<string, unknown> | null = null;
  if (request.envelope !== null) {
    if (reading.envelope === null) {
      if (reading.envelopeError) return fail(`pi: invalid envelope: ${reading.envelopeError}`);
      return fail(`pi: no envelope: the run ended without a successful ${request.envelopeTool} call`);
    }
    const checked = request.envelope(reading.envelope);
    if (!checked.ok) return fail(`pi: invalid envelope: ${checked.error}`);
    envelope = checked.value;
  } else if (reading.envelope !== null) {
    envelope = reading.envelope;
  }

  if (reading.stopReason === "error" || reading.stopReason === "aborted") {
    const why = reading.errorMessage ?? tail(proc.stderrTail);
    return fail(`pi: stopped on ${reading.stopReason}${why ? `: ${why}` : ""}`);
  }
  if (proc.exitCode !== null && proc.exitCode !== 0 && reading.text === null && envelope === null) {
    const evidence = tail(proc.stderrTail);
    return fail(`pi: exited with code ${proc.exitCode}${evidence ? `: ${evidence}` : ""}`);
  }
  // pi resolves a model pattern by substring: a bill on the wrong model is no green run.
  if (request.route !== null && reading.observedModel !== null && reading.observedModel !== request.route) {
    return fail(`pi: observed model ${reading.observedModel} is not the requested ${request.route}`);
  }
  const text = reading.text ?? (envelope === null ? null : JSON.stringify(envelope));
  if (text === null) return fail("pi: the run ended without any text");
  return { ...reading, text, envelope };
}
