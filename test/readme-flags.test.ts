// docs/agents.md's "Every flag, for every agent" table is the adapter table's
// settings rows: each cell says how that agent takes the flag, or the
// refusal (exit 2) and what to use instead, word for word.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { AGENT_NAMES } from "../src/core/agents.ts";
import { AGENTS } from "../src/agents/table.ts";
import { readmeCell, REQUEST_SETTINGS, SETTING_FLAGS } from "../src/agents/settings.ts";
import { ROOT } from "./helpers.ts";

/** The table under the heading, as rows of cells (`\|` is a pipe inside a cell). */
function readmeTable(heading: string): string[][] {
  const text = readFileSync(join(ROOT, "docs", "agents.md"), "utf8");
  const after = text.slice(text.indexOf(`### ${heading}`));
  const lines = after.split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  const rows: string[][] = [];
  for (const line of lines.slice(first)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .slice(1, -1)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

test("docs/agents.md's flag table is the adapter table's settings, for every agent", () => {
  const [header, rule, ...body] = readmeTable("Every flag, for every agent");
  expect(header).toEqual(["flag", ...AGENT_NAMES.map((a) => `${a} gets`)]);
  expect(rule?.every((c) => /^-+$/.test(c))).toBe(true);
  const expected = REQUEST_SETTINGS.map((setting) => [
    SETTING_FLAGS[setting],
    ...AGENT_NAMES.map((agent) => readmeCell(AGENTS[agent].settings[setting])),
  ]);
  expect(body).toEqual(expected);
});
