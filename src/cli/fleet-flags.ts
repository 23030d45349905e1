// Flags the fleet commands share: labels (a worker's --label, a task's
// --requires) and queue names, checked against one allow-list.
import { LABEL } from "../fleet/rules.ts";
import { repeated } from "./common.ts";
import { usageError } from "./errors.ts";

/** Every `--flag VALUE` given, each a label (rules.ts LABEL), without repeats; a bad one is a usage error. */
export function labels(rawArgs: string[], flag: string): string[] {
  const given = repeated(rawArgs, flag);
  const bad = given.find((l) => !LABEL.test(l));
  if (bad !== undefined)
    throw usageError(`--${flag} "${bad}" is not a label: letters, digits and . _ : = / - (up to 64, starting with a letter or digit)`);
  return [...new Set(given)];
}

/** A queue's name (--queue, `queue set NAME`): a label; `default` when none is given. */
export function queueNameOf(raw: unknown): string {
  if (raw === undefined) return "default";
  if (typeof raw !== "string" || !LABEL.test(raw))
    throw usageError(
      `the queue name "${String(raw)}" is not a label: letters, digits and . _ : = / - (up to 64, starting with a letter or digit)`,
    );
  return raw;
}
