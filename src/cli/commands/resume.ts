import { defineCommand } from "citty";
import { adapterOf, adapters, agentBinary } from "../../agents/table.ts";
import { axesLine, axesOf, resumeRefusal } from "../../agents/axes.ts";
import type { RunOutcome } from "../../agents/phase.ts";
import { SessionFileError, type FoundSession } from "../../agents/origin.ts";
import { refusal, refusedVerdict, type Found } from "./resume-refusal.ts";
import type { Ledger, SessionRow } from "../../io/ledger.ts";
import { isolateSetup } from "../isolation.ts";
import {
  agentArgs,
  agentSetup,
  folder,
  openExistingLedger,
  openLedger,
  projectConfig,
  promptArgs,
  rosterArgs,
  type AgentSetup,
} from "../agent-options.ts";
import { agentEnv } from "../agent-env.ts";
import { commandLine } from "../flags.ts";
import type { FlagRecord } from "../../config/resolve.ts";
import { join, resolve } from "node:path";
import { printable } from "../../core/text.ts";
import { ledgerChoice, type LedgerChoice } from "../ledger-option.ts";
import { AgentportError, usageError } from "../errors.ts";
import { readPrompt } from "../prompt.ts";
import { reportRun, resumeHint } from "../verdict-output.ts";
import type { AgentName } from "../../core/agents.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { progressMode, setVerbosity } from "../output.ts";
import { interruptSignal } from "../interrupt.ts";
import { stillRunning } from "../../io/reap.ts";
import { constants } from "node:os";
import type { Env } from "../../core/env.ts";
import { stateHome } from "../../io/paths.ts";
import { environmentError } from "../errors.ts";
import { log } from "../output.ts";
import { isTerminal } from "../fd-out.ts";
import { parkedUntil, waitUntil } from "../when-ready.ts";

/**
 * The session: from the ledger, else from the agents' own files. Nothing is
 * written here: a session found on disk is declared only once every flag has
 * been read and every check passed.
 */
async function findSession(choice: LedgerChoice, idOrPrefix: string, piSessionDir: string): Promise<Found> {
  const existing = await openExistingLedger(choice);
  const resolved = (await existing?.resolveSession(idOrPrefix)) ?? { kind: "unknown" as const };
  if (resolved.kind === "found") return { ledger: existing, row: resolved.session, session: resolved.session, onDisk: null };
  await existing?.close();
  if (resolved.kind === "ambiguous") {
    const lines = resolved.candidates.slice(0, 10).map((s) => `  ${s.id}  ${s.agent}  ${printable(s.cwd)}  ${s.declared_at}`);
    throw usageError(`"${idOrPrefix}" matches ${resolved.candidates.length} sessions; give more of the id:\n${lines.join("\n")}`);
  }
  let found: FoundSession[];
  try {
    found = adapters().flatMap((adapter) => adapter.findSessions(idOrPrefix, { piSessionDir }));
  } catch (error) {
    if (error instanceof SessionFileError) throw usageError(error.message);
    throw error;
  }
  const only = found[0];
  if (found.length !== 1 || only === undefined) {
    if (found.length > 1) throw usageError(`"${idOrPrefix}" matches ${found.length} sessions on disk; give more of the id`);
    throw usageError(`no session "${idOrPrefix}" in the ledger (${choice.shown}) nor in the agents' session folders`);
  }
  // Found in this host's files: born here.
  return {
    ledger: null,
    row: null,
    session: {
      id: only.id,
      agent: only.agent,
      cwd: only.cwd,
      session_file: only.sessionFile,
      agent_session_id: only.id,
      host: null,
      machine_id: null,
    },
    onDisk: only,
  };
}

/** With --verbose: how this phase's prompt gets in, how its end is seen, where its session lives (the row's axes). */
export function showAxes(setup: AgentSetup): void {
  log.debug(`axes: ${axesLine(axesOf(adapterOf(setup.agent), setup.settings.serve))}`);
}

/** The ledger's row for the session, declaring one found on disk: the first write of a resume. */
async function declared(ledger: Ledger, found: Found): Promise<SessionRow> {
  if (found.row !== null) return found.row;
  const disk = found.onDisk as FoundSession;
  return ledger.declareSession({ id: disk.id, agent: disk.agent, cwd: disk.cwd, agentSessionId: disk.id, sessionFile: disk.sessionFile });
}

export const resumeCommand = defineCommand({
  meta: {
    name: "resume",
    description:
      "Continue a session by id (or unique prefix) with the request it was born with (agent, model route, tools, thinking, profile, envelope, permission settings, pass-through; a flag overrides one), only from the folder it was born in; --interactive hands it to you on the terminal",
  },
  args: {
    id: {
      type: "positional",
      required: false,
      description: "Session id or a unique prefix of it (see agentport sessions); not with --last",
    },
    ...promptArgs,
    last: { type: "boolean", description: "The latest session born in this folder on this host (then every word is the prompt)" },
    interactive: {
      type: "boolean",
      description:
        "Hand the terminal to the agent on this session (pi --session FILE, claude --resume ID), in its birth folder, with its environment profile; recorded as a phase of kind interactive",
    },
    "when-ready": {
      type: "boolean",
      description:
        "A parked session (its last phase hit a usage limit): wait until its resume_after, then resume (Ctrl-C cancels the wait)",
    },
    "accept-imported-request": {
      type: "boolean",
      description:
        "Resume a session that came in by `agentport import` with the request it carries (model, permission mode, system prompt, pass-through); read it first with `agentport show ID`. Without this flag only the flags given now apply",
    },
    ...rosterArgs,
    ...agentArgs,
  },
  run: ({ args, rawArgs }) => resumeSession(args, rawArgs, args.last ? {} : null),
});

/** Which session `run --continue` and `resume --last` take: the latest born in this folder on this host (of this agent, when named). */
export interface Latest {
  agent?: AgentName;
}

/**
 * Resume the session the arguments name (`id` and the prompt's words), or,
 * with `latest`, the newest session born in this folder (every word the prompt).
 */
export async function resumeSession(
  args: Args & {
    id?: string;
    cwd?: string;
    home?: string;
    "session-dir"?: string;
    interactive?: boolean;
    prompt?: string;
    progress?: string;
    json?: boolean;
  },
  rawArgs: string[],
  latest: Latest | null,
): Promise<number> {
  const line = commandLine(args, rawArgs);
  // The id is the first word; the prompt is the rest (with --last, every word).
  const words = latest === null ? line.words.slice(1) : line.words;
  const verbosity = setVerbosity(args);
  if (latest === null && (args.id ?? "").trim() === "")
    throw usageError("resume needs a session id or a prefix of at least 4 characters (see agentport sessions), or --last");
  const cwd = folder(args.cwd);
  // The session first, with only what finding it needs: the named agent must match its agent.
  const config = await projectConfig(args, cwd);
  const home = stateHome(args.home);
  const choice = ledgerChoice(args, home, config);
  const id = latest === null ? (args.id as string) : await latestSession(choice, cwd, latest);
  const found = await findSession(choice, id, resolve(args["session-dir"] ?? join(home, "pi-sessions")));
  // Every check and every flag before the first write: a bad flag leaves the ledger as it was.
  let setup: AgentSetup | null = null;
  let hand: { bin: string; env: Env } | null = null;
  let prompt = "";
  let born: Birth = { request: {}, profile: undefined, imported: false };
  let wake: number | null = null;
  try {
    // The birth-place rules, host then folder, before any process starts: zero tokens.
    const reason = refusal(found, cwd, found.ledger?.thisHost() ?? null);
    if (reason !== null) {
      // A session seen on disk for the first time is declared even when refused: the ledger knows it next time.
      if (found.onDisk !== null) {
        await using ledger = found.ledger ?? (await openLedger(choice));
        await declared(ledger, found);
      }
      // With --json, main prints this verdict (as for every pre-flight exit).
      throw new AgentportError("refused", reason, { verdict: refusedVerdict(found.session, reason) });
    }
    // One agent per session at a time: a phase still run by a live agentport refuses the resume.
    const busy = found.ledger === null ? null : await stillRunning(found.ledger, found.session.id);
    if (busy !== null) {
      const where = busy.runner_host === null || busy.state !== "elsewhere" ? "" : ` on ${printable(busy.runner_host)}`;
      const agent = busy.agent_pgid === null ? "" : `, its agent pid ${busy.agent_pgid}`;
      const running =
        busy.state === "orphaned"
          ? `refused: session ${found.session.id}: the agent of phase ${busy.seq} (process group ${busy.agent_pgid}) still runs though its agentport (pid ${busy.runner_pid}) is gone; end it first (kill -- -${busy.agent_pgid})`
          : `refused: session ${found.session.id} is still running (agentport pid ${busy.runner_pid}${where}${agent}, phase ${busy.seq} since ${busy.started_at}); wait for it to finish, or stop it first`;
      throw new AgentportError("refused", running, { verdict: refusedVerdict(found.session, running) });
    }
    const unresumable = resumeRefusal(found.session.agent, adapterOf(found.session.agent).axes, found.session);
    if (unresumable !== null) throw usageError(unresumable);
    if (args["when-ready"]) {
      if (args.interactive) throw usageError("--when-ready and --interactive: choose one");
      wake = await parkedUntil(found.ledger, found.session.id);
    }
    born = birthOf(found.row, Boolean(args["accept-imported-request"]));
    if (!args.interactive) {
      setup = agentSetup({ flags: line.flags, passThrough: line.passThrough, session: born.request }, cwd, {
        agent: found.session.agent,
        config,
      });
      isolateSetup(setup);
      prompt = await readPrompt(words, args.prompt);
    } else {
      if (words.length > 0 || args.prompt !== undefined) throw usageError("--interactive takes no prompt: type it to the agent");
      if (args.isolate === true)
        throw usageError(
          "--isolate: not with --interactive (the terminal session is yours, outside any sandbox); resume without --interactive to run it isolated",
        );
      hand = interactiveChecks(line.flags, found.session, born.profile, (line.flags["env-file"] as string[] | undefined) ?? []);
    }
  } catch (error) {
    await found.ledger?.close();
    throw error;
  }
  await using ledger = found.ledger ?? (await openLedger(choice));
  // An imported row's model is part of its request: not a fallback either, unless accepted.
  const session = born.imported ? { ...(await declared(ledger, found)), model: null } : await declared(ledger, found);
  if (setup === null) return await interactiveResume(ledger, session, hand as { bin: string; env: Env }, cwd);
  if (wake !== null) await waitUntil(wake, session.id, interruptSignal());
  const mode: ProgressMode = progressMode<ProgressMode>(args.progress, verbosity, "auto");
  const view = progressView(mode, session.agent, setup.model ?? session.model);
  const adapter = adapterOf(session.agent);
  showAxes(setup);
  const resumed = (): Promise<RunOutcome> =>
    adapter.run(ledger, setup, {
      bin: agentBinary(adapter, setup.args),
      prompt,
      resume: session,
      progress: view.sink,
      signal: interruptSignal(),
    });
  return await reportRun(resumed, Boolean(args.json), view, resumeHint(args, session.cwd));
}

/** The id of the newest session born in `cwd` on this host (of the named agent), or a usage error. */
async function latestSession(choice: LedgerChoice, cwd: string, latest: Latest): Promise<string> {
  await using ledger = await openExistingLedger(choice, { readonly: true });
  const of = latest.agent === undefined ? "" : ` of ${latest.agent}`;
  const none = usageError(`no session${of} was born in ${printable(cwd)} on this host: start one with agentport run`);
  if (ledger === null) throw none;
  const [newest] = await ledger.listSessions({ cwd, agent: latest.agent, host: ledger.thisHost().machineId, limit: 1 });
  if (newest === undefined) throw none;
  return newest.id;
}

type Args = Record<string, unknown>;

/** What a resume takes from the session's birth: its request, as the resolver's "session" layer, and its environment profile. */
interface Birth {
  request: FlagRecord;
  profile: string[] | undefined;
  /** An imported request left out: nothing of it applies. */
  imported: boolean;
}

/**
 * The request a session was born with; older rows know only their model. An
 * imported row's request is someone else's data: taken only when the user
 * accepts it, else nothing of it applies (one line says so).
 */
export function birthOf(row: SessionRow | null, acceptImported: boolean): Birth {
  if (row === null) return { request: {}, profile: undefined, imported: false };
  if (row.imported_at !== null && !acceptImported) {
    log.warn(
      `session ${row.id} was imported (${row.imported_at}): its request (model, permission mode, system prompt, pass-through) is not used, only the flags given now; ` +
        `read it with \`agentport show ${row.id}\` and pass --accept-imported-request to resume with it`,
    );
    return { request: {}, profile: undefined, imported: true };
  }
  const profile = row.profile ? row.profile.split(",").filter(Boolean) : undefined;
  if (row.request) {
    try {
      const request: unknown = JSON.parse(row.request);
      if (request !== null && typeof request === "object" && !Array.isArray(request))
        return { request: request as FlagRecord, profile, imported: false };
    } catch {
      // An unreadable request is no request: the model is still known.
    }
  }
  return { request: row.model ? { model: row.model } : {}, profile, imported: false };
}

/** What an interactive hand-over needs, read before anything is written: the agent's binary and environment. */
function interactiveChecks(
  args: Args,
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
async function interactiveResume(ledger: Ledger, session: SessionRow, hand: { bin: string; env: Env }, cwd: string): Promise<number> {
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
    await ledger.finishPhase(phase.id, {
      status: "failed",
      ok: false,
      tokens: null,
      costMicroUsd: null,
      seconds: (performance.now() - started) / 1000,
      stopReason: null,
      failure,
      details: { interactive: true },
    });
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
