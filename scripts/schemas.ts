// Write schemas/NAME.json, the contract `agentport schema NAME` prints
// (src/cli/contract.ts); test/contract.test.ts checks they still agree.
//
//   bun run scripts/schemas.ts
import "../src/io/zod.ts";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SCHEMA_NAMES, jsonSchema } from "../src/cli/contract.ts";

const dir = resolve(import.meta.dir, "..", "schemas");
mkdirSync(dir, { recursive: true });
for (const name of SCHEMA_NAMES) writeFileSync(join(dir, `${name}.json`), `${JSON.stringify(jsonSchema(name), null, 2)}\n`);
console.error(`schemas: ${SCHEMA_NAMES.map((n) => `schemas/${n}.json`).join(", ")}`);
