// `agentport follow ID`: a session's progress from another terminal. It tails
// the latest phase's progress.ndjson (the lines, or the records with --json)
// and returns by itself when the phase ends, with its final line and the
// phase's exit code; for a finished session it prints what was kept and returns.
import { defineCommand } from "citty";
import { closeSync, existsSync, readSync } from "node:fs";
import { NamedFileError, openNamedFile, readNamedFile } from "../../io/named-file.ts";
import { foreignRunDir } from "../../io/foreign-run-dir.ts";
import { join } from "node:path";
import { usageError } from "../errors.ts";
import { ledgerCommandArgs } from "../ledger-option.ts";
import { setVerbosity, writeResult } from "../output.ts";
import { openNamedSession, SESSION_ID_ARG } from "../session-arg.ts";
import { describe } from "../progress-view.ts";
import { RUN_FILES } from "../../io/run-folder.ts";
import { exitCodeFor, TokensSchema, VerdictSchema } from "../../core/verdict.ts";
import { EXIT } from "../../core/exit.ts";
import { printable } from "../../core/text.ts";
import { spendParts } from "../../core/totals.ts";
import type { ProgressEvent } from "../../core/progress.ts";

const POLL_MS = 200;

/** At most this much of progress.ndjson is read at a time; a record is far shorter. */
const MAX_READ_BYTES = 1024 * 1024;

/**
 * New complete lines of a growing progress file, from `offset` on, at most
 * MAX_READ_BYTES of them (`more`: there may be more to read now). The file
 * must be a regular file; a "line" longer than the bound is no progress record.
 */
function readNew(path: string, offset: number): { lines: string[]; offset: number; more: boolean } {
  if (!existsSync(path)) return { lines: [], offset, more: false };
  const fd = openNamedFile(path);
  try {
    const buffer = Buffer.alloc(MAX_READ_BYTES);
    const n = readSync(fd, buffer, 0, buffer.length, offset);
    const end = buffer.subarray(0, n).lastIndexOf(10);
    if (end < 0) {
      if (n === buffer.length)
        throw new NamedFileError(
          `${path}: a line of more than ${MAX_READ_BYTES} bytes at byte ${offset}: not a progress file`,
          "line_too_long",
        );
      return { lines: [], offset, more: false };
    }
    return { lines: buffer.subarray(0, end).toString("utf8").split("\n"), offset: offset + end + 1, more: n === buffer.length };
  } finally {
    closeSync(fd);
  }
}

/** A record as a person reads it. */
function human(record: Record<string, unknown>): string {
  if (record.kind === "verdict") {
    const cost = typeof record.cost_micro_usd === "number" ? record.cost_micro_usd : null;
    const tokens = TokensSchema.safeParse(record.tokens);
    return [`${record.agent}: ${record.status}`, ...spendParts(cost, tokens.success ? tokens.data : null), `exit ${record.exit_code}`].join(
      " · ",
    );
  }
  const text = describe(record as unknown as ProgressEvent);
  return text === "" ? "" : `${record.agent}: ${text}`;
}

/** A verdict.json read back is at most this big (the agent's final text is in it). */
const MAX_VERDICT_BYTES = 64 * 1024 * 1024;

/** The phase's exit code from its verdict.json, when the progress ended without a verdict record (a killed runner). */
function storedExit(runDir: string, status: string | null): number {
  try {
    return exitCodeFor(VerdictSchema.parse(JSON.parse(readNamedFile(join(runDir, RUN_FILES.verdict), MAX_VERDICT_BYTES))));
  } catch {
    return status === "completed" ? EXIT.ok : EXIT.failed;
  }
}

export const followCommand = defineCommand({
  meta: {
    name: "follow",
    description: "Print a session's progress live (its latest phase), and return with the phase's exit code when it ends",
  },
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
    const foreign = foreignRunDir(opened.choice.home, runDir);
    if (foreign !== null)
      throw usageError(`refused: session ${session.id}: ${printable(foreign)} (an imported row may name any folder); nothing was read`);
    const file = join(runDir, RUN_FILES.progress);
    /** Print a record; the exit code when it is the verdict's. */
    const show = async (line: string): Promise<number | null> => {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line);
      } catch {
        return null; // a torn line of a runner killed mid-write
      }
      const shown = args.json ? line : human(record);
      if (shown !== "") await writeResult(printable(shown));
      return record.kind === "verdict" && typeof record.exit_code === "number" ? record.exit_code : null;
    };
    let offset = 0;
    for (;;) {
      // Whether it had ended before this read: what follows it is then all there is.
      const ended = (await ledger.phases(session.id)).find((p) => p.id === phase.id)?.ended_at != null;
      const read = readNew(file, offset);
      offset = read.offset;
      for (const line of read.lines) {
        const code = await show(line);
        if (code !== null) return code;
      }
      if (read.more) continue;
      if (ended) {
        const finished = (await ledger.phases(session.id)).find((p) => p.id === phase.id);
        if (!args.json)
          await writeResult(
            `${session.agent}: ${finished?.status ?? "ended"}${finished?.failure ? `: ${printable(finished.failure)}` : ""}`,
          );
        return storedExit(runDir, finished?.status ?? null);
      }
      await Bun.sleep(POLL_MS);
    }
  },
});
