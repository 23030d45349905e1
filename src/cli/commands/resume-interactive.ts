// resume --interactive: a person takes the session over on this terminal,
// with the agent's own command line; agentport waits and records the
// hand-over as a phase of kind "interactive".
import { constants } from "node:os";
import { adapterOf, agentBinary } from "../../agents/table.ts";
import { endedUncounted, type Ledger, type SessionRow } from "../../io/ledger.ts";
import type { Env } from "../../core/env.ts";
import { agentEnv } from "../agent-env.ts";
import { environmentError, usageError } from "../errors.ts";
import { isTerminal } from "../fd-out.ts";
import { log } from "../output.ts";
import type { Found } from "./resume-refusal.ts";

/** What an interactive hand-over needs, read before anything is written: the agent's binary and environment. */
export function interactiveChecks(
  args: Record<string, unknown>,
  session: Found["session"],
  profile: string[] | undefined,
  files: string[],
): { bin: string; env: Env } {
  if (!isTerminal(0) || !isTerminal(1)) throw usageError("--interactive needs a terminal: stdin and stdout must be a TTY");
  const adapter = adapterOf(session.agent);
  if (!adapter.capabilities.interactive) throw usageError(`${session.agent} sessions cannot be handed over on a terminal`);
  const bin = agentBinary(adapter, args);
  return { bin, env: agentEnv({ files, profile, agent: session.agent, allow: (args["env-allow"] as string[] | undefined) ?? [] }) };
}

/**
 * A person takes over: the real agent on this session, on this terminal, in
 * the birth folder, with the session's environment profile; agentport waits,
 * and records the hand-over as a phase of kind "interactive" (no tokens: the
 * agent's own files keep what was said).
 */
export async function interactiveResume(
  ledger: Ledger,
  session: SessionRow,
  hand: { bin: string; env: Env },
  cwd: string,
): Promise<number> {
  const { bin, env } = hand;
  const argv = await adapterOf(session.agent).interactiveArgv(session, bin, ledger, env);
  const phase = await ledger.startPhase({
    sessionId: session.id,
    kind: "interactive",
    runId: process.env.AGENTPORT_RUN_ID,
    name: process.env.AGENTPORT_PHASE,
  });
  log.info(`${session.agent}: handing the terminal over on session ${session.id} in ${cwd}`);
  const started = performance.now();
  // The agent owns the terminal now: Ctrl-C and Ctrl-\ are its to handle (agentport only waits;
  // Ctrl-Z stops both, fg resumes both); a hang-up or a TERM is passed on, and the end recorded.
  let child: Bun.Subprocess | null = null;
  const handlers: [NodeJS.Signals, () => void][] = [
    ["SIGINT", () => {}],
    ["SIGQUIT", () => {}],
    ["SIGHUP", () => child?.kill("SIGHUP")],
    ["SIGTERM", () => child?.kill("SIGTERM")],
  ];
  for (const [s, h] of handlers) process.on(s, h);
  let code: number;
  let failure: string | null = null;
  try {
    child = Bun.spawn(argv, { cwd: session.cwd, env, stdin: "inherit", stdout: "inherit", stderr: "inherit" });
    await child.exited;
    const signal = child.signalCode;
    code = child.exitCode ?? (signal ? 128 + (constants.signals[signal as keyof typeof constants.signals] ?? 0) : 1);
    if (code !== 0) failure = signal ? `${session.agent}: ended by ${signal}` : `${session.agent}: exited with code ${code}`;
  } catch (error) {
    failure = `${session.agent}: could not start ${argv[0]} (${(error as Error).message})`;
    await ledger.finishPhase(phase.id, endedUncounted("failed", failure, (performance.now() - started) / 1000, { interactive: true }));
    throw environmentError(failure);
  } finally {
    for (const [s, h] of handlers) process.off(s, h);
  }
  await ledger.finishPhase(phase.id, {
    status: code === 0 ? "completed" : "failed",
    ok: code === 0,
    tokens: null,
    costMicroUsd: null,
    seconds: (performance.now() - started) / 1000,
    stopReason: null,
    failure,
    details: { interactive: true, exit_code: code },
  });
  return code;
}
