// The README and docs/ link to each other by file and heading: every link to
// a file of the repository names one that exists, and every #anchor a heading
// of its target (as GitHub makes them), so a moved section breaks a test, not a reader.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { ROOT } from "./helpers.ts";

const slug = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/`/g, "")
    .replace(/[^a-z0-9 _-]/g, "")
    .replace(/ /g, "-");
const pages = [
  "README.md",
  ...readdirSync(join(ROOT, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => `docs/${f}`),
];
const anchors = (page: string) => new Set([...readFileSync(join(ROOT, page), "utf8").matchAll(/^#{1,4} (.*)$/gm)].map((m) => slug(m[1]!)));

test("every link between the README and docs/ names a file and a heading that exist", () => {
  const broken: string[] = [];
  for (const page of pages) {
    for (const m of readFileSync(join(ROOT, page), "utf8").matchAll(/\]\(([^)#\s]*)(#[^)\s]+)?\)/g)) {
      const [, target = "", anchor] = m;
      if (/^[a-z]+:/.test(target)) continue;
      const file = target === "" ? page : normalize(join(dirname(page), target));
      if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${target} (no such file)`);
      else if (anchor !== undefined && file.endsWith(".md") && !anchors(file).has(anchor.slice(1)))
        broken.push(`${page}: ${target}${anchor} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
  expect(pages.length).toBeGreaterThan(5);
});

test("the README is a door: at most ~300 lines, opening with the install-and-selftest and the test commands", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  expect(readme.split("\n").length).toBeLessThanOrEqual(300);
  const block = readme
    .slice(readme.indexOf("```sh") + 5, readme.indexOf("```", readme.indexOf("```sh") + 5))
    .trim()
    .split("\n");
  expect(block[0]).toStartWith("npm ci && npm run selftest");
  expect(block[1]).toStartWith("npm test");
});
