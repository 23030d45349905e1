// Reprint each failed test's own output (its error, its diff, what it logged)
// after the suite's summary. CI keeps only the tail of a long log, and bun
// prints a failure's details where it happened, far above that tail.
// Usage: bun run scripts/test-failures.ts LOG
import { readFileSync } from "node:fs";

const MAX_LINES = 150;
const file = process.argv[2];
if (file === undefined) {
  console.error("usage: bun run scripts/test-failures.ts LOG (the output of `bun test`)");
  process.exit(2);
}
let testFile = "";
let since: string[] = [];
const blocks: string[] = [];
for (const line of readFileSync(file, "utf8").split("\n")) {
  if (/^\S.*\.test\.ts:$/.test(line)) {
    testFile = line;
    since = [];
  } else if (/^\((pass|skip|todo)\) /.test(line)) {
    since = [];
  } else if (/^\(fail\) /.test(line)) {
    const cut = since.length > MAX_LINES ? [`… ${since.length - MAX_LINES} lines before`, ...since.slice(-MAX_LINES)] : since;
    blocks.push([`── ${testFile}`, ...cut, line].join("\n"));
    since = [];
  } else {
    since.push(line);
  }
}
if (blocks.length > 0) console.log(`\n${blocks.length} failed test(s), each with its own output:\n\n${blocks.join("\n\n")}`);
