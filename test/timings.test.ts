// npm test runs the files on three workers with --timings=test/timings.json: each worker starts
// its slowest files first. A file with no recorded duration is started before every file that
// has one (bun 1.4.5), so a new file left out of it pushes the slowest file to the end of the run.
// Refresh the durations with `bun test --timeout 90000 --parallel=3 --timings=test/timings.json --update-timings`.
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const TEST = import.meta.dir;
const recorded = Object.keys((JSON.parse(readFileSync(join(TEST, "timings.json"), "utf8")) as { files: Record<string, number> }).files);
const files = readdirSync(TEST)
  .filter((f) => f.endsWith(".test.ts"))
  .map((f) => `test/${f}`);

test("every test file has a duration in test/timings.json, and every duration a file", () => {
  expect(files.filter((f) => !recorded.includes(f))).toEqual([]);
  expect(recorded.filter((f) => !files.includes(f))).toEqual([]);
});
