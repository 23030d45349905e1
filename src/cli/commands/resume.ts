import { defineCommand } from "citty";
import { realpathSync, existsSync } from "node:fs";
import { runClaude } from "../../agents/claude-run.ts";
import { needsProbe, oneShot } from "../../agents/adapters.ts";
import { runPi } from "../../agents/pi-run.ts";
import type { RunOutcome } from "../../agents/phase.ts";
import { claudeConfigDir, findClaudeSession, findPiSession } from "../../agents/origin.ts";
import type { Ledger, SessionRow } from "../../io/ledger.ts";
import { EXIT, type Verdict } from "../../core/verdict.ts";
import { agentArgs, agentBinary, agentExtras, agentSetup, claudeBin, folder, openExistingLedger, openLedger, piBin, piCapabilities, projectConfig, promptArgs, rosterArgs } from "../agent-options.ts";
import { commandLine } from "../flags.ts";
import type { FlagRecord } from "../../config/resolve.ts";
import { join, resolve } from "node:path";
import { ledgerPath } from "../../io/ledger.ts";
import { CliError, usageError } from "../errors.ts";
import { readPrompt } from "../prompt.ts";
import { printVerdict, showArgv } from "../verdict-output.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { setVerbosity } from "../output.ts";
import { interruptSignal } from "../interrupt.ts";
import { constants } from "node:os";
import { agentEnvironment } from "../../core/env.ts";
import { readDotenv } from "../../io/dotenv.ts";
import { stateHome } from "../../io/paths.ts";
import { environmentError } from "../errors.ts";
import { log } from "../output.ts";

const real = (path: string): string => (existsSync(path) ? realpathSync(path) : path);

/**
 * The session: from the ledger, else from the agents' own files (then
 * declared, so the ledger knows it next time). A ledger that does not exist
 * yet is created only for such a declaration: an unknown id writes nothing.
 */
async function findSession(home: string, idOrPrefix: string, piDirs: string[]): Promise<{ ledger: Ledger; session: SessionRow }> {
  const existing = await openExistingLedger(home);
  const resolved = (await existing?.resolveSession(idOrPrefix)) ?? { kind: "unknown" as const };
  if (resolved.kind === "found") return { ledger: existing as Ledger, session: resolved.session };
  if (resolved.kind === "ambiguous") {
    await existing?.close();
    const lines = resolved.candidates.slice(0, 10).map((s) => `  ${s.id}  ${s.agent}  ${s.cwd}  ${s.declared_at}`);
    throw usageError(`"${idOrPrefix}" matches ${resolved.candidates.length} sessions; give more of the id:\n${lines.join("\n")}`);
  }
  const found = [...findPiSession(piDirs, idOrPrefix), ...findClaudeSession(claudeConfigDir(), idOrPrefix)];
  const only = found[0];
  if (found.length !== 1 || only === undefined) {
    await existing?.close();
    if (found.length > 1) throw usageError(`"${idOrPrefix}" matches ${found.length} sessions on disk; give more of the id`);
    throw usageError(`no session "${idOrPrefix}" in the ledger (${ledgerPath(home)}) nor in the agents' session folders`);
  }
  const ledger = existing ?? (await openLedger(home));
  return { ledger, session: await ledger.declareSession({ id: only.id, agent: only.agent, cwd: only.cwd, agentSessionId: only.id, sessionFile: only.sessionFile }) };
}

/** The verdict of a resume refused before any process started: zero tokens, for scripts reading --json. */
function refusedVerdict(session: SessionRow, reason: string): Verdict {
  return {
    agent: session.agent, session_id: session.id, status: "refused", ok: false, text: null, envelope: null,
    failure: reason, stop_reason: null, cost_micro_usd: 0, tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
    refused: [], env_fault: false, fault: null, summary: { birth_cwd: session.cwd },
  };
}

export const resumeCommand = defineCommand({
  meta: {
    name: "resume",
    description: "Continue a session by id (or unique prefix) with the request it was born with (agent, model route, tools, thinking, profile, envelope, permission settings, pass-through; a flag overrides one), only from the folder it was born in; --interactive hands it to you on the terminal",
  },
  args: {
    id: { type: "positional", required: true, description: "Session id or a unique prefix of it (see agentport sessions)" },
    ...promptArgs,
    interactive: { type: "boolean", description: "Hand the terminal to the agent on this session (pi --session FILE, claude --resume ID), in its birth folder, with its environment profile; recorded as a phase of kind interactive" },
    ...rosterArgs,
    ...agentArgs,
  },
  async run({ args, rawArgs }) {
    const verbosity = setVerbosity(args);
    const cwd = folder(args.cwd);
    const line = commandLine(args, rawArgs);
    // The id is the first word; the prompt is the rest.
    const words = line.words.slice(1);
    // The session first, with only what finding it needs: the named agent must match its agent.
    const config = projectConfig(args, cwd);
    const home = stateHome(args.home);
    const sessionDir = args["session-dir"] ?? join(home, "pi-sessions");
    const found = await findSession(home, args.id, [resolve(sessionDir)]);
    await using ledger = found.ledger;
    const session = found.session;
    // The birth-folder rule, before any process starts: zero tokens.
    if (real(session.cwd) !== cwd) {
      const reason = `refused: session ${session.id} (${session.agent}) was born in ${session.cwd}, not in ${cwd}; resume it from its birth folder (cd ${session.cwd}, or --cwd ${session.cwd})`;
      throw new CliError(reason, EXIT.refused, refusedVerdict(session, reason));
    }
    if (args.interactive) {
      if (words.length > 0 || args.prompt !== undefined) throw usageError("--interactive takes no prompt: type it to the agent");
      return await interactiveResume(ledger, session, args, cwd);
    }
    const setup = agentSetup({ flags: line.flags, passThrough: line.passThrough, session: bornWith(session) }, cwd, { agent: session.agent, config });
    const prompt = await readPrompt(words, args.prompt);
    const mode: ProgressMode = verbosity === "quiet" ? "off" : ((args.progress as ProgressMode | undefined) ?? "auto");
    const view = progressView(mode, session.agent);
    const common = setup.common;
    const base = {
      ...common,
      prompt,
      model: setup.model,
      tools: setup.tools,
      thinking: setup.thinking,
      schema: setup.schema,
      nudges: setup.nudges,
      extras: agentExtras(setup),
      onArgv: showArgv,
      progress: view.sink,
      signal: interruptSignal(),
    };
    let outcome: RunOutcome;
    if (session.agent === "pi") {
      const bin = agentBinary("pi", setup.settings, setup.sources);
      const caps = await piCapabilities(bin, ledger, common.env);
      if (session.session_file !== null && !existsSync(session.session_file)) {
        throw usageError(`session ${session.id}: its pi session file ${session.session_file} is gone`);
      }
      outcome = await runPi(ledger, {
        ...base,
        ...setup.pi,
        sessionDir: session.session_dir ?? setup.pi.sessionDir,
        bin,
        caps,
        resume: { id: session.id, sessionFile: session.session_file },
      });
    } else {
      outcome = await runClaude(ledger, { ...base, bin: agentBinary("claude", setup.settings, setup.sources), resumeId: session.agent_session_id ?? session.id });
    }
    view.close();
    await printVerdict(outcome.verdict, Boolean(args.json), outcome.runDir);
    return outcome.exitCode;
  },
});

/** The request a session was born with, as the resolver's "session" layer; older rows know only their model. */
function bornWith(session: SessionRow): FlagRecord {
  if (session.request) {
    try {
      const request: unknown = JSON.parse(session.request);
      if (request !== null && typeof request === "object" && !Array.isArray(request)) return request as FlagRecord;
    } catch {
      // An unreadable request is no request: the model is still known.
    }
  }
  return session.model ? { model: session.model } : {};
}

type Args = Record<string, unknown>;

/**
 * A person takes over: the real agent on this session, on this terminal, in
 * the birth folder, with the session's environment profile; agentport waits,
 * and records the hand-over as a phase of kind "interactive" (no tokens: the
 * agent's own files keep what was said).
 */
async function interactiveResume(ledger: Ledger, session: SessionRow, args: Args, cwd: string): Promise<number> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) throw usageError("--interactive needs a terminal: stdin and stdout must be a TTY");
  const profile = session.profile ? session.profile.split(",").filter(Boolean) : undefined;
  const { env, missing } = agentEnvironment({ real: process.env, dotenv: readDotenv(session.cwd), profile });
  if (missing.length > 0) log.warn(`profile: ${missing.join(", ")} found neither in the environment nor in ${session.cwd}/.env`);
  const adapter = oneShot(session.agent);
  if (adapter.interactiveArgv === undefined) throw usageError(`${adapter.name} sessions cannot be handed over on a terminal`);
  if (session.session_file !== null && !existsSync(session.session_file)) {
    throw usageError(`session ${session.id}: its session file ${session.session_file} is gone`);
  }
  const bin = session.agent === "pi" ? piBin(args) : claudeBin(args);
  const caps = needsProbe(adapter) ? await piCapabilities(bin, ledger, env) : null;
  let argv: string[];
  try {
    argv = adapter.interactiveArgv(session, bin, caps);
  } catch (error) {
    throw usageError((error as Error).message);
  }
  const phase = await ledger.startPhase({ sessionId: session.id, kind: "interactive", runId: process.env.AGENTPORT_RUN_ID, name: process.env.AGENTPORT_PHASE });
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
    await ledger.finishPhase(phase.id, { status: "failed", ok: false, tokens: null, costMicroUsd: null, seconds: (performance.now() - started) / 1000, stopReason: null, failure, details: { interactive: true } });
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
