// The part of zod the schemas use (src/core/lazy-schema.ts, Zod), for
// src/io/zod.ts to require on the first use of one. Each member named, so
// the bundler keeps only those of zod's modules.
import { z } from "zod";
import type { Zod } from "../core/lazy-schema.ts";

export const zod: Zod = {
  array: z.array,
  boolean: z.boolean,
  enum: z.enum,
  fromJSONSchema: z.fromJSONSchema,
  looseObject: z.looseObject,
  number: z.number,
  object: z.object,
  record: z.record,
  strictObject: z.strictObject,
  string: z.string,
  toJSONSchema: z.toJSONSchema,
  union: z.union,
  unknown: z.unknown,
};
