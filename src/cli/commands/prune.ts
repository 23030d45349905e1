// `agentport prune --older-than 30d`: remove the run folders nothing has
// written to for that long (never a ledger row: the numbers stay, the files
// go), and say how much that freed. A running phase's folder is kept, however old.
import { defineCommand } from "citty";
import { existsSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { environmentError, usageError } from "../errors.ts";
import { refuseLink } from "../../io/own-path.ts";
import { ledgerCommandArgs, openExistingLedger } from "../ledger-option.ts";
import { projectLedger } from "../agent-options.ts";
import { setVerbosity, writeResult } from "../output.ts";
import { safeJson } from "../../core/text.ts";
import { parseAge } from "../common.ts";

interface Tree {
  bytes: number;
  /** The newest modification in it (ms since the epoch). */
  newest: number;
}

/** Bytes and newest modification of a folder, recursively; symlinks counted, never followed. */
function measure(path: string): Tree {
  const stat = lstatSync(path);
  const tree = { bytes: stat.isDirectory() ? 0 : stat.size, newest: stat.mtimeMs };
  if (!stat.isDirectory()) return tree;
  for (const name of readdirSync(path)) {
    const inner = measure(join(path, name));
    tree.bytes += inner.bytes;
    tree.newest = Math.max(tree.newest, inner.newest);
  }
  return tree;
}

/** A run folder removed, or one line saying why it could not be (a read-only home): exit 5. */
function remove(dir: string, removedBefore: number): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw environmentError(
      `cannot remove ${dir}: ${code}${removedBefore > 0 ? ` (${removedBefore} removed before it)` : ""}; prune needs a writable home`,
    );
  }
}

const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

export const pruneCommand = defineCommand({
  meta: { name: "prune", description: "Remove run folders older than an age (the ledger keeps every row), and say how much that freed" },
  args: {
    "older-than": {
      type: "string",
      required: true,
      valueHint: "AGE",
      description: "Remove run folders unchanged for this long: 30d, 12h, 90m, 3600s",
    },
    "dry-run": { type: "boolean", description: "Say what would be removed, remove nothing" },
    json: { type: "boolean", description: "Print {removed, bytes, kept_running, dry_run} as one JSON object" },
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    const age = parseAge(String(args["older-than"]));
    if (age === null) throw usageError(`--older-than must be a number with s, m, h or d (30d, 12h), got "${args["older-than"]}"`);
    const choice = await projectLedger(args);
    const runs = join(choice.home, "runs");
    const running = new Set<string>();
    {
      await using ledger = await openExistingLedger(choice, { readonly: true });
      for (const phase of (await ledger?.runningPhases()) ?? []) if (phase.run_dir !== null) running.add(phase.run_dir);
    }
    const cutoff = Date.now() - age;
    let removed = 0;
    let bytes = 0;
    let keptRunning = 0;
    refuseLink(runs); // a planted link: its target is not agentport's to prune
    for (const name of existsSync(runs) ? readdirSync(runs) : []) {
      const dir = join(runs, name);
      const tree = measure(dir);
      if (tree.newest >= cutoff) continue;
      if (running.has(dir)) {
        keptRunning += 1;
        continue;
      }
      if (!args["dry-run"]) remove(dir, removed);
      removed += 1;
      bytes += tree.bytes;
    }
    const dry = Boolean(args["dry-run"]);
    if (args.json) await writeResult(safeJson({ removed, bytes, kept_running: keptRunning, dry_run: dry }));
    else
      await writeResult(
        `${dry ? "would remove" : "removed"} ${removed} run folder(s) older than ${args["older-than"]} in ${runs}, ${dry ? "freeing" : "freed"} ${mib(bytes)}${keptRunning > 0 ? ` (kept ${keptRunning} of running phases)` : ""}`,
      );
    return 0;
  },
});
