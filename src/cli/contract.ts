// The contract: a JSON Schema for each thing agentport prints or keeps,
// generated from the zod schemas that check it (`agentport schema NAME`,
// the files under schemas/, the library's `schemas`). Loads zod.
import type { z } from "zod";
import { loadZod, type Zod } from "../core/lazy-schema.ts";
import { VerdictSchema } from "../core/verdict.ts";
import { ProgressRecordSchema } from "../core/progress-schema.ts";
import { HarvestSchema } from "../bon/harvest-schema.ts";
import { PhaseJsonSchema, SessionJsonSchema } from "../io/ledger-export.ts";
import { ConfigSchema } from "../config/schema.ts";
import {
  GroupJsonSchema,
  QueueJsonSchema,
  RankingJsonSchema,
  ResultJsonSchema,
  TaskJsonSchema,
  WorkerJsonSchema,
} from "../fleet/records.ts";

import type { JsonSchema } from "../core/envelope.ts";

interface Entry {
  title: string;
  /** What prints or keeps it. */
  description: string;
  /** input: what a person writes (defaults may be left out); output: what agentport writes. */
  io: "input" | "output";
  schema(z: Zod): z.ZodType;
}

export const CONTRACT = {
  verdict: {
    title: "agentport verdict",
    description: "The verdict `run`, `resume` and `replay` print with --json (verdict.json)",
    io: "output",
    schema: () => VerdictSchema,
  },
  progress: {
    title: "agentport progress record",
    description: "One line of `--progress json` and of progress.ndjson",
    io: "output",
    schema: () => ProgressRecordSchema,
  },
  harvest: {
    title: "agentport bon harvest",
    description: "harvest.json, which `bon` writes (and prints with --json)",
    io: "output",
    schema: () => HarvestSchema,
  },
  session: {
    title: "agentport session",
    description: "A line of `sessions --json`, and what `show --json` prints",
    io: "output",
    schema: () => SessionJsonSchema,
  },
  phase: {
    title: "agentport phase",
    description: "One phase of a session in `sessions --json` and `show --json`",
    io: "output",
    schema: () => PhaseJsonSchema,
  },
  task: {
    title: "agentport task",
    description: "A fleet task: what `submit --json` and `task ID --json` print, a line of `tasks --json` and of `wait --json`",
    io: "output",
    schema: () => TaskJsonSchema,
  },
  result: {
    title: "agentport task result",
    description: "A line of `results --json`: a finished task's exit code and verdict",
    io: "output",
    schema: () => ResultJsonSchema,
  },
  worker: {
    title: "agentport worker",
    description: "A line of `workers --json`: a live worker of the fleet",
    io: "output",
    schema: () => WorkerJsonSchema,
  },
  queue: {
    title: "agentport queue",
    description: "A line of `queue --json`: a queue's budget and what was spent this period",
    io: "output",
    schema: () => QueueJsonSchema,
  },
  group: {
    title: "agentport group of arms",
    description: "A best-of-N group across the fleet: what `submit --arms N --json` prints, each arm a task",
    io: "output",
    schema: () => GroupJsonSchema,
  },
  ranking: {
    title: "agentport ranking of arms",
    description: "What `wait GROUP --json` and `results GROUP --json` print once every arm reported: the arms ranked by bon's rule",
    io: "output",
    schema: () => RankingJsonSchema,
  },
  config: {
    title: "agentport.json",
    description: "agentport.json, the project config (point its $schema key here)",
    io: "input",
    schema: () => ConfigSchema,
  },
} satisfies Record<string, Entry>;

export type SchemaName = keyof typeof CONTRACT;
export const SCHEMA_NAMES = Object.keys(CONTRACT) as SchemaName[];

export function isSchemaName(name: string): name is SchemaName {
  return Object.hasOwn(CONTRACT, name);
}

/** The JSON Schema (draft 2020-12) of one name. */
export function jsonSchema(name: SchemaName): JsonSchema {
  const z = loadZod();
  const entry: Entry = CONTRACT[name];
  const generated = z.toJSONSchema(entry.schema(z), { io: entry.io, target: "draft-2020-12" }) as JsonSchema;
  const { $schema, ...body } = generated;
  const schema: JsonSchema = { $schema, title: entry.title, description: entry.description, ...body };
  return schema;
}
