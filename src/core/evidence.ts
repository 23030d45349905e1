// Evidence of work: what a run must leave behind (--expect-change,
// --expect-file) and the judgement of a completed run that did not. Pure: the
// observation is made in src/io/evidence.ts.
import { failure, type Failure } from "./failure.ts";

export interface Expectations {
  /** The run must change its folder (tracked or untracked, not ignored files). */
  change: boolean;
  /** Files the run must write, relative to its folder. */
  files: string[];
}

/** What changed in the run's folder since the run started: `git diff --numstat` of the two snapshots. */
export interface Changes {
  files: number;
  insertions: number;
  deletions: number;
}

export interface Observed {
  /** null: the folder is in no git work tree (nothing to measure). */
  changes: Changes | null;
  /** The expected files that do not exist, or were not written since the run started. */
  unwritten: string[];
}

/** What the judge is given: the expectations (if any) and what the run left. */
export interface WorkEvidence {
  expect?: Expectations;
  observed: Observed;
}

/** Why a completed run did not do what it was expected to, or null. */
export function evidenceFailure({ expect, observed }: WorkEvidence): Failure | null {
  if (expect === undefined) return null;
  if (expect.change) {
    if (observed.changes === null)
      return failure("no_change", "--expect-change: the run's folder is in no git work tree, so no change can be shown");
    if (observed.changes.files === 0) return failure("no_change", "--expect-change: the run completed and left no change in its folder");
  }
  if (observed.unwritten.length > 0) {
    return failure("missing_file", `--expect-file: the run completed without writing ${observed.unwritten.join(", ")}`);
  }
  return null;
}

/** `git diff --numstat` output summed (a binary file counts as a file with no lines). */
export function numstatChanges(numstat: string): Changes {
  const changes: Changes = { files: 0, insertions: 0, deletions: 0 };
  for (const line of numstat.split("\n")) {
    const [added, deleted] = line.split("\t");
    if (deleted === undefined) continue;
    changes.files++;
    changes.insertions += Number(added) || 0;
    changes.deletions += Number(deleted) || 0;
  }
  return changes;
}
