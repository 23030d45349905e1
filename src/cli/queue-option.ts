// Which queue the fleet commands use: the ledger's PostgreSQL (--ledger URL,
// else $AGENTPORT_LEDGER), never a SQLite file: a queue is for many boxes.
import { Queue } from "../fleet/queue.ts";
import { redactUrl } from "../io/ledger-url.ts";
import { stateHome } from "../io/paths.ts";
import { AgentportError, environmentError, usageError } from "./errors.ts";
import { HOME_ARG, ledgerArgs, ledgerChoice, type LedgerChoice } from "./ledger-option.ts";

export const queueArgs = { home: HOME_ARG, ...ledgerArgs };

export interface QueueChoice {
  home: string;
  url: string;
  queue: Queue;
  /** The ledger the queue is in (its sessions: a resume's birth place). */
  ledger: LedgerChoice;
}

/** The queue named by the flags or the environment, opened (its table created if absent). */
export async function openQueue(args: Record<string, unknown>): Promise<QueueChoice> {
  const home = stateHome(typeof args.home === "string" ? args.home : undefined);
  const choice = ledgerChoice(args, home, null);
  if (choice.location.kind !== "postgres")
    throw usageError(
      `the fleet queue needs a PostgreSQL ledger: give --ledger postgres://USER@HOST/DB or set $AGENTPORT_LEDGER (got ${choice.shown})`,
    );
  const url = choice.location.url;
  try {
    return { home, url, queue: await Queue.open(url), ledger: choice };
  } catch (error) {
    throw unreachable(url, error, "cannot be opened");
  }
}

const unreachable = (url: string, error: unknown, what: string): AgentportError =>
  environmentError(`the queue ${redactUrl(url)} ${what}: ${((error as Error).message ?? String(error)).split(url).join(redactUrl(url))}`);

/** Open the queue, do `body` with it, close it; the database failing on the way is one line, exit 5. */
export async function usingQueue<T>(args: Record<string, unknown>, body: (queue: Queue, choice: QueueChoice) => Promise<T>): Promise<T> {
  const choice = await openQueue(args);
  const { url, queue } = choice;
  try {
    return await body(queue, choice);
  } catch (error) {
    if (error instanceof AgentportError && error.kind !== "internal") throw error;
    throw unreachable(url, error, "failed");
  } finally {
    await queue.close().catch(() => {});
  }
}
