// codex's provider retries, read from its top-level `error` notices
// ("Reconnecting... 1/2 (why)"): how many, the last reason, whether it is
// still retrying (nothing of the model's since) and whether it waits for the
// network. Pure.
import { MAX_VALUE_CHARS } from "../reduction.ts";
import { clean } from "../text.ts";

export class CodexRetries {
  count = 0;
  /** The last notice's reason; "" when there was none. */
  last = "";
  /** A retry notice with nothing of the model's after it: codex is still retrying. */
  retrying = false;
  waitingForNetwork = false;

  /** A top-level error: a retry notice gives its progress line ("attempt 1 of 2"); anything else (the final error before turn.failed) null. */
  notice(message: string): string | null {
    const retry = /^Reconnecting\.\.\.\s*(\d+\/\d+)?/.exec(message);
    if (retry === null) return null;
    this.count += 1;
    this.retrying = true;
    const why = /\((.*)\)\s*$/.exec(message);
    this.last = clean(why?.[1] ?? message, MAX_VALUE_CHARS);
    this.waitingForNetwork = message.includes("waiting for network");
    const [attempt, max] = (retry[1] ?? "").split("/");
    return attempt ? `attempt ${attempt} of ${max}` : "waiting for network";
  }

  /** Something of the model's arrived: the retry before it worked. */
  answered(): void {
    this.retrying = false;
  }
}
