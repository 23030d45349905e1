// The pi extension agentport carries inside its binary and writes to the
// state folder at run time (loaded with `-e`). It registers the envelope tool
// from the JSON Schema named by $AGENTPORT_ENVELOPE_SCHEMA (pi validates the
// arguments against it) with the description in $AGENTPORT_ENVELOPE_DESCRIPTION
// (core/instructions.ts: the same words claude is given), and writes an inventory of the extensions pi loaded
// to $AGENTPORT_INVENTORY_FILE. No imports beyond node:fs, so jiti loads it
// with nothing installed.
import { ownFolder, replaceFile } from "../../io/own-path.ts";
import { join } from "node:path";

export const EXTENSION_NAME = "agentport";

export const EXTENSION_SOURCE = `// Written by agentport; regenerated on every run.
import { readFileSync, writeFileSync } from "node:fs";

const TOOL = process.env.AGENTPORT_ENVELOPE_TOOL || "report_phase";

function extensionName(path: string): string {
  const parts = path.split("/");
  const file = parts[parts.length - 1] || "";
  const base = /^index\\.[cm]?[jt]s$/.test(file) ? parts[parts.length - 2] || file : file;
  return base.replace(/\\.[cm]?[jt]s$/, "");
}

export default function agentport(pi: any) {
  const schemaFile = process.env.AGENTPORT_ENVELOPE_SCHEMA;
  if (schemaFile) {
    const schema = JSON.parse(readFileSync(schemaFile, "utf8"));
    delete schema.$schema;
    pi.registerTool({
      name: TOOL,
      label: "Report phase",
      description: process.env.AGENTPORT_ENVELOPE_DESCRIPTION || "Report the outcome of this task as a structured envelope. Call it exactly once, at the very end.",
      promptSnippet: "Report the task's outcome as a structured envelope",
      promptGuidelines: ["Call " + TOOL + " exactly once when the task is done, with every required field."],
      parameters: schema,
      async execute(_id: string, params: unknown) {
        return { content: [{ type: "text", text: "reported" }], details: params };
      },
    });
  }
  const inventoryFile = process.env.AGENTPORT_INVENTORY_FILE;
  if (inventoryFile) {
    pi.on("session_start", async () => {
      const names = new Set<string>(["agentport"]);
      const sources = [...(pi.getAllTools?.() ?? []), ...(pi.getCommands?.() ?? [])];
      for (const item of sources) {
        const info = item?.sourceInfo;
        if (info && info.source !== "builtin" && info.source !== "sdk" && typeof info.path === "string") names.add(extensionName(info.path));
      }
      writeFileSync(inventoryFile, JSON.stringify({ pi_version: process.env.AGENTPORT_PI_VERSION || "", extensions: [...names] }));
    });
  }
}
`;

/** Write the extension into `dir` and return its path. */
export function writeExtension(dir: string): string {
  const path = join(ownFolder(dir), `${EXTENSION_NAME}.ts`);
  replaceFile(path, EXTENSION_SOURCE, 0o644);
  return path;
}
