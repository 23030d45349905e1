// `agentport cancel TASK`: a task of the fleet queue, cancelled through the
// database. A queued task ends `cancelled` at once; a running one is asked to
// stop, and its worker stops the run at its next lease beat (as `cancel`
// stops a session) and stores it `cancelled` — or, its worker dead, the
// lease's expiry does.
import { safeJson } from "../../core/text.ts";
import { isFinal, LEASE_MS } from "../../fleet/rules.ts";
import { Queue } from "../../fleet/queue.ts";
import { AgentportError } from "../errors.ts";
import type { LedgerChoice } from "../ledger-option.ts";
import { writeResult } from "../output.ts";

/** How long cancel waits for a running task's worker (or its lease's expiry). */
const WAIT_MS = LEASE_MS + 15_000;

/** Cancel the task `id` names in the queue of `choice`'s PostgreSQL; null when it names none (a session, then). */
export async function cancelTask(choice: LedgerChoice, id: string, json: boolean): Promise<number | null> {
  if (choice.location.kind !== "postgres") return null;
  const queue = await Queue.ifPresent(choice.location.url);
  if (queue === null) return null;
  try {
    const before = await queue.get(id);
    if (before === null) return null;
    const outcome = await queue.cancel(id);
    const end = performance.now() + WAIT_MS;
    let task = (await queue.get(id))!;
    while (!isFinal(task.state)) {
      if (performance.now() > end)
        throw new AgentportError(
          "supervision",
          `task ${id}: asked to stop, but it is still ${task.state} after ${WAIT_MS / 1000} s (its worker stops it at its next beat; the lease's expiry ends it otherwise)`,
        );
      await Bun.sleep(200);
      await queue.settleExpired();
      task = (await queue.get(id))!;
    }
    const words =
      outcome === "final"
        ? `task ${id} was already ${task.state}`
        : outcome === "cancelled"
          ? `task ${id} cancelled (it was queued: nothing ran)`
          : `task ${id} ${task.state}: its run stopped (exit ${task.exit_code ?? "none"})`;
    await writeResult(json ? safeJson({ task_id: id, was: before.state, state: task.state, exit_code: task.exit_code }) : words);
    return 0;
  } finally {
    await queue.close().catch(() => {});
  }
}
