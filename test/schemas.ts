// The published contract (schemas/NAME.json) under a real validator (ajv,
// draft 2020-12), for the tests that check real outputs against it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020.js";
import { ROOT } from "./helpers.ts";

export const SCHEMA_FILES = [
  "verdict",
  "progress",
  "harvest",
  "session",
  "phase",
  "task",
  "result",
  "worker",
  "queue",
  "group",
  "ranking",
  "config",
];

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
const validators = Object.fromEntries(
  SCHEMA_FILES.map((n) => [n, ajv.compile(JSON.parse(readFileSync(join(ROOT, "schemas", `${n}.json`), "utf8")))]),
);

/** The value's problems under schema `name`, as ajv words them (empty: valid). */
export function problems(name: string, value: unknown): string[] {
  const validate = validators[name];
  if (validate === undefined) throw new Error(`no schema ${name} under schemas/`);
  return validate(value) ? [] : (validate.errors ?? []).map((e) => `${name}${e.instancePath} ${e.message} ${JSON.stringify(e.params)}`);
}
