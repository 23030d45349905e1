// `agentport resume`: one more phase of a session the ledger (or an agent's
// own files) knows, with the request it was born with, in its birth folder.
import { defineCommand } from "citty";
import { join, resolve } from "node:path";
import { adapterOf, agentBinary } from "../../agents/table.ts";
import { axesLine, axesOf, resumeRefusal } from "../../agents/axes.ts";
import type { RunOutcome } from "../../agents/phase.ts";
import type { Ledger, SessionRow } from "../../io/ledger.ts";
import type { ProgressSink } from "../../core/progress.ts";
import { refusal, refusedVerdict } from "./resume-refusal.ts";
import { isolateSetup } from "../isolation.ts";
import { agentArgs, agentSetup, folder, openLedger, projectConfig, promptArgs, rosterArgs, type AgentSetup } from "../agent-options.ts";
import { commandLine } from "../flags.ts";
import { printable } from "../../core/text.ts";
import type { Env } from "../../core/env.ts";
import { ledgerChoice } from "../ledger-option.ts";
import { AgentportError, usageError } from "../errors.ts";
import { readPrompt } from "../prompt.ts";
import { reportRun, resumeHint } from "../verdict-output.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { log, progressMode, setVerbosity } from "../output.ts";
import { interruptSignal } from "../interrupt.ts";
import { stillRunning } from "../../io/reap.ts";
import { stateHome } from "../../io/paths.ts";
import { parkedUntil, waitUntil } from "../when-ready.ts";
import { declared, findSession, latestSession, type Latest } from "./resume-find.ts";
import { birthOf, type Birth } from "./resume-birth.ts";
import { interactiveChecks, interactiveResume } from "./resume-interactive.ts";

export { birthOf };

/** With --verbose: how this phase's prompt gets in, how its end is seen, where its session lives (the row's axes). */
export function showAxes(setup: AgentSetup): void {
  log.debug(`axes: ${axesLine(axesOf(adapterOf(setup.agent), setup.settings.serve))}`);
}

/** `resume`'s flags (a fleet worker parses a resume task's request with them too). */
export const resumeArgs = {
  id: {
    type: "positional" as const,
    required: false,
    description: "Session id or a unique prefix of it (see agentport sessions); not with --last",
  },
  ...promptArgs,
  last: { type: "boolean" as const, description: "The latest session born in this folder on this host (then every word is the prompt)" },
  interactive: {
    type: "boolean" as const,
    description:
      "Hand the terminal to the agent on this session (pi --session FILE, claude --resume ID), in its birth folder, with its environment profile; recorded as a phase of kind interactive",
  },
  "when-ready": {
    type: "boolean" as const,
    description: "A parked session (its last phase hit a usage limit): wait until its resume_after, then resume (Ctrl-C cancels the wait)",
  },
  "accept-imported-request": {
    type: "boolean" as const,
    description:
      "Resume a session that came in by `agentport import` with the request it carries (model, permission mode, system prompt, pass-through); read it first with `agentport show ID`. Without this flag only the flags given now apply",
  },
  ...rosterArgs,
  ...agentArgs,
};

export const resumeCommand = defineCommand({
  meta: {
    name: "resume",
    description:
      "Continue a session by id (or unique prefix) with the request it was born with (agent, model route, tools, thinking, profile, envelope, permission settings, pass-through; a flag overrides one), only from the folder it was born in; --interactive hands it to you on the terminal",
  },
  args: resumeArgs,
  run: ({ args, rawArgs }) => resumeSession(args, rawArgs, args.last ? {} : null),
});

type ResumeArgs = Record<string, unknown> & {
  id?: string;
  cwd?: string;
  home?: string;
  "session-dir"?: string;
  interactive?: boolean;
  prompt?: string;
  progress?: string;
  json?: boolean;
};

/** A resume found and checked, its ledger open (the caller disposes it): a phase to run (`setup`), or the terminal's (`hand`). */
export interface ResumeTurn {
  ledger: Ledger;
  session: SessionRow;
  /** The folder it runs in: the session's birth folder. */
  cwd: string;
  setup: AgentSetup | null;
  hand: { bin: string; env: Env } | null;
  prompt: string;
  /** --when-ready: when the parked session may go on. */
  wake: number | null;
}

/**
 * Resume the session the arguments name (`id` and the prompt's words), or,
 * with `latest`, the newest session born in this folder (every word the prompt).
 */
export async function resumeSession(args: ResumeArgs, rawArgs: string[], latest: Latest | null): Promise<number> {
  const verbosity = setVerbosity(args);
  const turn = await resumeTurn(args, rawArgs, latest);
  await using ledger = turn.ledger;
  const { session, setup } = turn;
  if (setup === null) return await interactiveResume(ledger, session, turn.hand as { bin: string; env: Env }, turn.cwd);
  if (turn.wake !== null) await waitUntil(turn.wake, session.id, interruptSignal());
  const mode: ProgressMode = progressMode<ProgressMode>(args.progress, verbosity, "auto");
  const view = progressView(mode, session.agent, setup.model ?? session.model);
  return await reportRun(() => resumePhase(turn, view.sink, interruptSignal()), Boolean(args.json), view, resumeHint(args, session.cwd));
}

/** Run a found resume's phase (its `setup`): what `resume` does after its checks, for a fleet worker too. */
export function resumePhase(turn: ResumeTurn, progress: ProgressSink, signal: AbortSignal): Promise<RunOutcome> {
  const setup = turn.setup as AgentSetup;
  const adapter = adapterOf(turn.session.agent);
  showAxes(setup);
  return adapter.run(turn.ledger, setup, {
    bin: agentBinary(adapter, setup.args),
    prompt: turn.prompt,
    resume: turn.session,
    progress,
    signal,
  });
}

/** Find the session and check everything before the first write; then declare it (seen on disk only) and return its turn. */
export async function resumeTurn(args: ResumeArgs, rawArgs: string[], latest: Latest | null): Promise<ResumeTurn> {
  const line = commandLine(args, rawArgs);
  // The id is the first word; the prompt is the rest (with --last, every word).
  const words = latest === null ? line.words.slice(1) : line.words;
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
  const ledger = found.ledger ?? (await openLedger(choice));
  try {
    // An imported row's model is part of its request: not a fallback either, unless accepted.
    const session = born.imported ? { ...(await declared(ledger, found)), model: null } : await declared(ledger, found);
    return { ledger, session, cwd, setup, hand, prompt, wake };
  } catch (error) {
    await ledger.close();
    throw error;
  }
}
