// The layers the imports show: no file under src/agents/ or src/config/
// imports from src/cli/ (the adapters and the resolver are below the CLI).
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { ROOT } from "./helpers.ts";

/** Every relative import of every .ts file under `folder`, resolved, as "file → target". */
function arrows(folder: string): string[] {
  const base = join(ROOT, "src", folder);
  const files = readdirSync(base, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"));
  return files.flatMap((file) => {
    const text = readFileSync(join(base, file), "utf8");
    const targets = [...text.matchAll(/^\s*(?:import|export)\b[^;]*?from\s+"(\.[^"]+)"/gms)].map((m) => m[1] ?? "");
    return targets.map((t) => `src/${folder}/${file} → ${relative(ROOT, resolve(dirname(join(base, file)), t))}`);
  });
}

test("the import reader sees the arrows (a file that imports the CLI is caught)", () => {
  expect(arrows("cli").some((a) => a.includes("→ src/cli/"))).toBe(true);
  expect(arrows("agents").some((a) => a.includes("→ src/core/"))).toBe(true);
});

test("no file under src/agents/ or src/config/ imports from src/cli/", () => {
  const up = [...arrows("agents"), ...arrows("config")].filter((a) => a.split(" → ")[1]?.startsWith("src/cli/"));
  expect(up).toEqual([]);
});

test("no file under src/config/ imports from src/agents/ (the resolver is below the adapters)", () => {
  const down = arrows("config").filter((a) => a.split(" → ")[1]?.startsWith("src/agents/"));
  expect(down).toEqual([]);
});
