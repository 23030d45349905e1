import { defineCommand } from "citty";
import { safeJson } from "../../core/text.ts";
import { usageError } from "../errors.ts";
import { writeResult } from "../stdout.ts";
import { CONTRACT, SCHEMA_NAMES, isSchemaName, jsonSchema } from "../contract.ts";

export const schemaCommand = defineCommand({
  meta: { name: "schema", description: "Print the JSON Schema of what agentport prints or keeps (no NAME: the names)" },
  args: {
    name: { type: "positional", required: false, description: `One of ${SCHEMA_NAMES.join(", ")}` },
    json: { type: "boolean", description: "Without NAME: the names and what each describes, as one JSON object" },
  },
  async run({ args }) {
    const name = args.name;
    if (name === undefined) {
      if (args.json) await writeResult(safeJson(Object.fromEntries(SCHEMA_NAMES.map((n) => [n, CONTRACT[n].description]))));
      else await writeResult(SCHEMA_NAMES.map((n) => `${n.padEnd(10)}${CONTRACT[n].description}`).join("\n"));
      return 0;
    }
    if (!isSchemaName(name)) throw usageError(`no schema named "${name}": one of ${SCHEMA_NAMES.join(", ")}`);
    await writeResult(JSON.stringify(jsonSchema(name), null, 2));
    return 0;
  },
});
