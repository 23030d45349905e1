// `agentport resume --when-ready ID`: a parked session (its last phase ended at
// a quota wall) is resumed once its usage limit resets. One line says until
// when; Ctrl-C ends the wait with nothing resumed (exit 130).
import type { Ledger } from "../io/ledger.ts";
import { AgentportError, usageError } from "./errors.ts";
import { log } from "./output.ts";

/** When the session's last phase may go on: its `resume_after`; a usage error when it is not parked or the time is unknown. */
export async function parkedUntil(ledger: Ledger | null, sessionId: string): Promise<number> {
  const phases = ledger === null ? [] : await ledger.phases(sessionId);
  const last = phases.reduce<(typeof phases)[number] | null>((a, p) => (a === null || p.seq > a.seq ? p : a), null);
  if (last === null || last.status !== "parked") {
    throw usageError(
      `--when-ready: session ${sessionId} is not parked (its last phase is ${last?.status ?? "not recorded"}); resume it without --when-ready`,
    );
  }
  const at = last.resume_after === null ? Number.NaN : Date.parse(last.resume_after);
  if (!Number.isFinite(at))
    throw usageError(
      `--when-ready: session ${sessionId} is parked but its agent gave no reset time; resume it without --when-ready once its usage limit has reset`,
    );
  return at;
}

/** Wait until `at` (epoch ms); an abort (Ctrl-C, SIGTERM) ends the wait with exit 130. */
export async function waitUntil(at: number, sessionId: string, signal: AbortSignal): Promise<void> {
  const ms = at - Date.now();
  if (ms <= 0) return;
  log.info(`${sessionId}: parked until ${new Date(at).toISOString()}; resuming in ${Math.ceil(ms / 60_000)} min (Ctrl-C cancels)`);
  const woke = await new Promise<boolean>((done) => {
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", () => (clearTimeout(timer), done(false)), { once: true });
  });
  if (!woke) throw new AgentportError("interrupted", `--when-ready: cancelled while waiting; session ${sessionId} was not resumed`);
}
