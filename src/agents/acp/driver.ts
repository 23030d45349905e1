// The ACP driver: the one-shot driver (io/spawn.ts) with the client as its
// conversation: its messages written to the agent's stdin as lines. The
// prompt's response ends the run: stdin is closed and the agent, which ends
// with its stdin, is given the linger to go. A stop (timeout, stall, budget,
// cancel, Ctrl-C) asks first: `session/cancel`, then up to the cancel grace
// for the prompt to come back `cancelled`, then the process tree is stopped
// as for every agent.
import { recordFile } from "../../io/append-file.ts";
import { secrets } from "../../core/redact.ts";
import { join } from "node:path";
import type { AcpClient } from "../../core/acp/reducer.ts";
import type { Json } from "../../core/record.ts";
import { drive, type DriveRequest, type DriveResult } from "../../io/spawn.ts";

/** How long a cancelled prompt is given to come back `cancelled` before the tree is stopped. */
export const CANCEL_GRACE_MS = 3_000;

/** The run folder's record of every permission answer agentport gave the agent. */
export const ANSWERS_FILE = "acp-answers.jsonl";

/** Bounded like the run folder's other records: an agent that asks without end cannot fill the disk. */
const ANSWERS_LIMIT = { maxBytes: 16 * 1024 * 1024, last: JSON.stringify({ type: "agentport.answers_cut", max_bytes: 16 * 1024 * 1024 }) };

export function answerRecorder(runDir: string): (answer: Json) => void {
  // The answer names what the agent asked (its titles and paths): redacted like every stored line. A full disk loses the record, not the run.
  return (answer) =>
    recordFile(join(runDir, ANSWERS_FILE), ANSWERS_LIMIT).line(secrets.text(JSON.stringify({ ts: new Date().toISOString(), ...answer })));
}

export function driveAcp(request: DriveRequest, client: AcpClient, cancelGraceMs = CANCEL_GRACE_MS): Promise<DriveResult> {
  return drive({
    ...request,
    stdin: null,
    conversation: {
      start: (write) => client.start(write as (message: Json) => void),
      over: () => client.over(),
      cancel: () => client.cancel(),
      cancelGraceMs,
    },
  });
}
