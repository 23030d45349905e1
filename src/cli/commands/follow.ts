// `agentport follow ID`: a session's progress from another terminal. It tails
// the latest phase's progress.ndjson (the lines, or the records with --json)
// and returns by itself when the phase ends, with its final line and the
// phase's exit code; for a finished session it prints what was kept and returns.
import { defineCommand } from "citty";
import { closeSync, existsSync, openSync, readFileSync, readSync } from "node:fs";
import { join } from "node:path";
import { usageError } from "../errors.ts";
import { ledgerCommandArgs } from "../ledger-option.ts";
import { setVerbosity, writeResult } from "../output.ts";
import { openNamedSession, SESSION_ID_ARG } from "../session-arg.ts";
import { describe } from "../progress-view.ts";
import { RUN_FILES } from "../../io/run-folder.ts";
import { exitCodeFor, VerdictSchema } from "../../core/verdict.ts";
import { EXIT } from "../../core/exit.ts";
import { printable } from "../../core/text.ts";
import type { ProgressEvent } from "../../core/progress.ts";

const POLL_MS = 200;

/** New complete lines of a growing file, from `offset` on. */
function readNew(path: string, offset: number): { lines: string[]; offset: number } {
  if (!existsSync(path)) return { lines: [], offset };
  const fd = openSync(path, "r");
  try {
    const chunks: Buffer[] = [];
    const buffer = Buffer.alloc(64 * 1024);
    let at = offset;
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, at);
      if (n === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, n)));
      at += n;
    }
    const text = Buffer.concat(chunks).toString("utf8");
    const end = text.lastIndexOf("\n");
    if (end < 0) return { lines: [], offset };
    return { lines: text.slice(0, end).split("\n"), offset: offset + Buffer.byteLength(text.slice(0, end + 1)) };
  } finally {
    closeSync(fd);
  }
}

/** A record as a person reads it. */
function human(record: Record<string, unknown>): string {
  if (record.kind === "verdict") {
    const cost = typeof record.cost_micro_usd === "number" ? ` · $${(record.cost_micro_usd / 1e6).toFixed(4)}` : "";
    return `${record.agent}: ${record.status}${cost} · exit ${record.exit_code}`;
  }
  const text = describe(record as unknown as ProgressEvent);
  return text === "" ? "" : `${record.agent}: ${text}`;
}

/** The phase's exit code from its verdict.json, when the progress ended without a verdict record (a killed runner). */
function storedExit(runDir: string, status: string | null): number {
  try {
    return exitCodeFor(VerdictSchema.parse(JSON.parse(readFileSync(join(runDir, RUN_FILES.verdict), "utf8"))));
  } catch {
    return status === "completed" ? EXIT.ok : EXIT.failed;
  }
}

export const followCommand = defineCommand({
  meta: { name: "follow", description: "Print a session's progress live (its latest phase), and return with the phase's exit code when it ends" },
  args: {
    id: SESSION_ID_ARG,
    json: { type: "boolean", description: "The progress records as NDJSON (as --progress json emits them) instead of lines" },
    ...ledgerCommandArgs,
  },
  async run({ args }) {
    setVerbosity(args);
    await using opened = await openNamedSession(args, args.id, { readonly: true });
    const { ledger, session } = opened;
    const phase = (await ledger.phases(session.id)).findLast((p) => p.run_dir !== null);
    if (phase === undefined) throw usageError(`session ${session.id} has no run folder to follow`);
    const runDir = phase.run_dir!;
    const file = join(runDir, RUN_FILES.progress);
    let offset = 0;
    for (;;) {
      // Whether it had ended before this read: what follows it is then all there is.
      const ended = (await ledger.phases(session.id)).find((p) => p.id === phase.id)?.ended_at != null;
      const read = readNew(file, offset);
      offset = read.offset;
      for (const line of read.lines) {
        let record: Record<string, unknown>;
        try {
          record = JSON.parse(line);
        } catch {
          continue; // a torn line of a runner killed mid-write
        }
        const shown = args.json ? line : human(record);
        if (shown !== "") await writeResult(printable(shown));
        if (record.kind === "verdict" && typeof record.exit_code === "number") return record.exit_code;
      }
      if (ended) {
        const finished = (await ledger.phases(session.id)).find((p) => p.id === phase.id);
        if (!args.json) await writeResult(`${session.agent}: ${finished?.status ?? "ended"}${finished?.failure ? `: ${printable(finished.failure)}` : ""}`);
        return storedExit(runDir, finished?.status ?? null);
      }
      await Bun.sleep(POLL_MS);
    }
  },
});
