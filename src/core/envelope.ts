// Typed envelopes: the structured answer a phase must end with. The default
// is defined once, here, in zod; a `--schema FILE` JSON Schema is turned into
// zod too, so pi's tool, claude's fenced block and the judge check one thing.
import type { z } from "zod";
import { loadZod } from "./lazy-schema.ts";

export type JsonSchema = Record<string, unknown>;

export function defaultEnvelopeJsonSchema(): JsonSchema {
  const z = loadZod();
  // Built here, not as a lazySchema: zod keeps .meta() by the schema's identity, which a stand-in would not have.
  const envelope = z
    .object({
      status: z.enum(["success", "failure"]).describe("Whether the phase did what was asked"),
      summary: z.string().describe("What was done, in a few sentences"),
      changed_files: z.array(z.string()).describe("Paths of the files this phase changed, relative to the working folder"),
    })
    .meta({ title: "Envelope", description: "The report that ends a phase" });
  return z.toJSONSchema(envelope) as JsonSchema;
}

export type EnvelopeCheck = { ok: true; value: Record<string, unknown> } | { ok: false; error: string };

const MAX_SCHEMA_DEPTH = 64;

/** The target of a local `$ref` ("#", "#/$defs/x"), or undefined. */
function resolvePointer(root: unknown, ref: string): unknown {
  if (ref === "#") return root;
  if (!ref.startsWith("#/")) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const key = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/**
 * Why a schema cannot be used safely, or null: a `$ref` that leads back to
 * itself (its validator would recurse without end) or nesting past 64 levels.
 */
export function schemaHazard(root: unknown): string | null {
  const path = new Set<unknown>();
  // Nodes already walked whole without a hazard: a shared $defs entry is walked once.
  const safe = new Set<unknown>();
  const visit = (node: unknown, depth: number): string | null => {
    if (node === null || typeof node !== "object" || safe.has(node)) return null;
    if (depth > MAX_SCHEMA_DEPTH) return `the schema is nested more than ${MAX_SCHEMA_DEPTH} levels deep`;
    path.add(node);
    try {
      const ref = (node as Record<string, unknown>).$ref;
      if (typeof ref === "string") {
        const target = resolvePointer(root, ref);
        // Only a $ref can lead back to a node on the path: JSON itself is a tree.
        if (path.has(target)) return `recursive $ref "${ref}": a schema that refers to itself is not supported`;
        const found = visit(target, depth + 1);
        if (found !== null) return found;
      }
      for (const child of Object.values(node)) {
        const found = visit(child, depth + 1);
        if (found !== null) return found;
      }
      safe.add(node);
      return null;
    } finally {
      path.delete(node);
    }
  };
  return visit(root, 0);
}

/** A JSON Schema as a validator, or an error naming what zod could not read. */
export function compileSchema(schema: unknown): { ok: true; check: (value: unknown) => EnvelopeCheck } | { ok: false; error: string } {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema))
    return { ok: false, error: "the schema is not a JSON object" };
  const hazard = schemaHazard(schema);
  if (hazard !== null) return { ok: false, error: hazard };
  let validator: z.ZodType;
  try {
    validator = loadZod().fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);
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
