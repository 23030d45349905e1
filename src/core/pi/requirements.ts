// What a pi run must prove besides its answer: the required extensions (by
// the inventory; fail closed when it is missing) and the model that answered
// (pi resolves a model pattern by substring: a bill on the wrong model is no
// green run). Pure; a failure or null.
import { failure, type Failure } from "../failure.ts";
import type { Inventory, PiReading } from "./reducer.ts";

export interface PiRequirements {
  /** Extensions that must be proven loaded; empty means no requirement. */
  requireExt: string[];
  /** The route the model was requested as (`provider/id`), or null. */
  route: string | null;
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

/** The first unmet requirement of a run that answered, else null (a run with no answer has other trouble). */
export function unmetRequirement(reading: PiReading, request: PiRequirements): Failure | null {
  if (reading.assistantMessages === 0) return null;
  const extensions = missingExtensions(request.requireExt, reading.inventory);
  if (extensions !== null) return failure("extension_missing", `pi: ${extensions}`);
  if (request.route !== null && reading.observedModel !== null && reading.observedModel !== request.route) {
    return failure("model_mismatch", `pi: observed model ${reading.observedModel} is not the requested ${request.route}`);
  }
  return null;
}
