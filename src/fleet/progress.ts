// What an attempt's run tells its worker while it runs: `agentport run
// --progress json` writes one progress record a line on stderr, each checked
// here by the progress contract's own schema (`agentport schema progress`).
// The worker takes two things from it: the run's cost so far (renewed with
// the lease, counted by the queue's budget) and its last word (a log
// record's message, or a line that is no record: a crash) for the worker's
// own line when the run fails.
import "../io/zod.ts";
import { LineFramer } from "../core/frame.ts";
import { ProgressRecordSchema } from "../core/progress-schema.ts";
import { clean } from "../core/text.ts";

/** Progress records are short; a longer line is skipped unread. */
const MAX_LINE_BYTES = 64 * 1024;
const MAX_WORD_CHARS = 300;

/** Read `stderr` to its end, telling each cost so far; the run's last word. */
export async function watchProgress(stderr: ReadableStream<Uint8Array>, onCost: (microUsd: number) => void): Promise<string> {
  let last = "";
  const take = (text: string) => {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      if (text.trim()) last = clean(text, MAX_WORD_CHARS);
      return;
    }
    const record = ProgressRecordSchema.safeParse(json);
    if (!record.success) return;
    const r = record.data;
    if (r.kind === "log") last = clean(r.message, MAX_WORD_CHARS);
    else if (typeof r.cost_micro_usd === "number") onCost(r.cost_micro_usd);
  };
  const framer = new LineFramer({ line: take, unterminated: take, oversize: () => {}, framingError: () => {} }, MAX_LINE_BYTES);
  for await (const chunk of stderr) framer.push(chunk);
  framer.end();
  return last;
}
