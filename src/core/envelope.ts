// Typed envelopes: the structured answer a phase must end with. The default
// is defined once, here, in zod; a `--schema FILE` JSON Schema is turned into
// zod too, so pi's tool, claude's fenced block and the judge check one thing.
import { z } from "zod";

export const DefaultEnvelope = z
  .object({
    status: z.enum(["success", "failure"]).describe("Whether the phase did what was asked"),
    summary: z.string().describe("What was done, in a few sentences"),
    changed_files: z.array(z.string()).describe("Paths of the files this phase changed, relative to the working folder"),
  })
  .meta({ title: "Envelope", description: "The report that ends a phase" });

export type JsonSchema = Record<string, unknown>;

export function defaultEnvelopeJsonSchema(): JsonSchema {
  return z.toJSONSchema(DefaultEnvelope) as JsonSchema;
}

export type EnvelopeCheck = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

/** A JSON Schema as a validator, or an error naming what zod could not read. */
export function compileSchema(schema: unknown): { ok: true; check: (value: unknown) => EnvelopeCheck } | { ok: false; error: string } {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return { ok: false, error: "the schema is not a JSON object" };
  let validator: z.ZodType;
  try {
    validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
  } catch (error) {
    return { ok: false, error: `the schema cannot be used: ${(error as Error).message.split("\n")[0]}` };
  }
  return {
    ok: true,
    check(value: unknown): EnvelopeCheck {
      const parsed = validator.safeParse(value);
      if (parsed.success) {
        if (parsed.data === null || typeof parsed.data !== "object" || Array.isArray(parsed.data)) {
          return { ok: false, error: "the envelope is not a JSON object" };
        }
        return { ok: true, value: parsed.data as Record<string, unknown> };
      }
      const issue = parsed.error.issues[0];
      const path = issue?.path.length ? issue.path.join(".") : "(root)";
      return { ok: false, error: `${path}: ${issue?.message ?? "invalid"}` };
    },
  };
}

/** What a run delivered as its envelope, before the schema is applied. */
export type Delivered = { found: true; value: unknown } | { found: false; error: string; invalid?: boolean };

/**
 * The envelope in a final text: the last fenced ```json block, else the whole
 * text when it is one JSON object. Claude has no typed tool for it.
 */
export function envelopeFromText(text: string | null): Delivered {
  if (text === null) return { found: false, error: "the run has no final text" };
  const fences = [...text.matchAll(/```(?:json)?[ \t]*\r?\n([\s\S]*?)```/g)];
  const candidate = fences.length > 0 ? (fences[fences.length - 1]?.[1] ?? "") : text.trim();
  if (!candidate.trim().startsWith("{")) return { found: false, error: "no fenced json block and no JSON object in the final text" };
  try {
    return { found: true, value: JSON.parse(candidate) };
  } catch (error) {
    return { found: false, error: `the envelope block is not valid JSON (${(error as Error).message})` };
  }
}

/** pi's envelope: the report tool's details, or why the tool refused its arguments. */
export function envelopeFromTool(tool: string, value: unknown, error: string | null): Delivered {
  if (value !== null) return { found: true, value };
  if (error) return { found: false, error, invalid: true };
  return { found: false, error: `the run ended without a successful ${tool} call` };
}
