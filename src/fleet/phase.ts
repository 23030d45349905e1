// An attempt's phase, run in the worker's own process through the path `run`
// takes (runSetup: declared first, supervised, its run folder, the worker's
// keeper watching its agent), or for a resume the one `resume ID` takes
// (resumeTurn: every check `resume` makes; then resumePhase). What `run`
// takes from the process is the phase's own: the workspace as its folder
// (never a chdir), an abort signal for its stop (lease lost, cancel, drain)
// instead of the process's signals, its sandbox (sandbox.ts ownSandbox), its
// cost from its progress sink, its verdict and exit code as values instead of
// stdout and the exit status. A phase that throws ends as its attempt's
// failure, typed as `run` would say it (a pre-flight verdict), and the
// worker's other phases go on.
import { parseArgs } from "citty";
import { UnrecordedVerdict, type RunOutcome } from "../agents/phase.ts";
import { AgentportError } from "../core/errors.ts";
import { secrets } from "../core/redact.ts";
import { clean } from "../core/text.ts";
import type { ProgressSink } from "../core/progress.ts";
import { isAgentName } from "../core/agents.ts";
import { EXIT } from "../core/exit.ts";
import { ownSandbox } from "../io/sandbox.ts";
import { agentSetup, folder, openLedger, projectConfig, setupLedger } from "../cli/agent-options.ts";
import { commandLine } from "../cli/flags.ts";
import { CANCELLED } from "../cli/interrupt.ts";
import { isolateSetup } from "../cli/isolation.ts";
import { agentBin, runArgs, runSetup } from "../cli/commands/run.ts";
import { keepVerdict, preflightVerdict } from "../cli/verdict-output.ts";
import { resumeArgs, resumePhase, resumeTurn } from "../cli/commands/resume.ts";
import type { Task, TaskRequest } from "./queue.ts";

/** What a phase needs: the task, its workspace, the worker's home and ledger. */
export interface PhaseInput {
  task: Task;
  workspace: string;
  home: string;
  ledger: string;
  /** The phase's cost so far, each time its progress tells it. */
  onCost: (microUsd: number) => void;
  /** A warning of the phase's, for the worker's log. */
  warn: (text: string) => void;
}

/** How a phase ended: its verdict, exit code (as `run`'s), last word, and run folder (null: none found). */
export interface PhaseEnd {
  verdict: unknown;
  code: number;
  lastWord: string;
  runDir: string | null;
}

export interface Phase {
  ended: Promise<PhaseEnd>;
  /** Stop its agent: as Ctrl-C stops a run, or as `agentport cancel` does. */
  stop(how: "interrupt" | "cancel"): void;
}

/** The request's flags as `run` takes them (a resume keeps the session's agent: no --agent). */
export function runFlags(request: TaskRequest, resume = false): string[] {
  return Object.entries(request)
    .filter(([name]) => !(resume && name === "agent"))
    .flatMap(([name, value]) => (value === true ? [`--${name}`] : value === false ? [] : [`--${name}`, String(value)]));
}

const MAX_WORD_CHARS = 300;

/** A new phase of the task, in this process. */
export function inProcessPhase(p: PhaseInput): Phase {
  const controller = new AbortController();
  const ended = ownSandbox(() => runPhaseHere(p, controller.signal)).catch((error: unknown) => thrown(p.task.request, error));
  return { ended, stop: (how) => controller.abort(how === "cancel" ? CANCELLED : undefined) };
}

async function runPhaseHere(p: PhaseInput, signal: AbortSignal): Promise<PhaseEnd> {
  const { task } = p;
  const resume = task.resume_session;
  // The command line `run` (or `resume ID`) would be given, in the workspace by --cwd.
  const raw = [
    ...(resume === null ? [] : [resume]),
    ...runFlags(task.request, resume !== null),
    ...["--home", p.home, "--ledger", p.ledger, "--cwd", p.workspace, "--prompt", task.prompt],
  ];
  const progress: ProgressSink = (event) => {
    if (typeof event.cost_micro_usd === "number") p.onCost(event.cost_micro_usd);
  };
  let outcome: RunOutcome;
  let code: number;
  try {
    outcome = resume === null ? await newPhase(p, raw, progress, signal) : await resumedPhase(p, raw, progress, signal);
    code = outcome.exitCode;
  } catch (error) {
    if (!(error instanceof UnrecordedVerdict)) throw error;
    // The verdict stands; the ledger would not take it: exit 5, as `run` says it.
    outcome = error.outcome;
    code = EXIT.environment;
  }
  keepVerdict(outcome);
  const verdict = secrets.verdict(outcome.verdict);
  return { verdict, code, lastWord: clean(verdict.failure?.message ?? "", MAX_WORD_CHARS), runDir: outcome.runDir };
}

/** `run`: a new session. */
async function newPhase(p: PhaseInput, raw: string[], progress: ProgressSink, signal: AbortSignal): Promise<RunOutcome> {
  const args = parseArgs(raw, runArgs) as Record<string, unknown>;
  const line = commandLine(args, raw);
  const cwd = folder(p.workspace);
  const setup = agentSetup({ flags: line.flags, passThrough: line.passThrough }, cwd, {
    useDefault: true,
    config: await projectConfig(args, cwd),
  });
  setup.common.onWarning = p.warn;
  isolateSetup(setup);
  await using ledger = await openLedger(setupLedger(setup));
  return await runSetup(ledger, setup, { bin: agentBin(setup), prompt: p.task.prompt, progress, signal });
}

/** `resume ID`: the session's next phase, in its birth folder, with every check `resume` makes. */
async function resumedPhase(p: PhaseInput, raw: string[], progress: ProgressSink, signal: AbortSignal): Promise<RunOutcome> {
  const turn = await resumeTurn(parseArgs(raw, resumeArgs), raw, null);
  await using _ledger = turn.ledger;
  if (turn.setup !== null) turn.setup.common.onWarning = p.warn;
  return await resumePhase(turn, progress, signal);
}

/** A phase that threw: the pre-flight verdict `run --json` would print for it, and its exit code. */
function thrown(request: TaskRequest, error: unknown): PhaseEnd {
  const own =
    error instanceof AgentportError
      ? error
      : new AgentportError("internal", `internal error: ${(error as Error)?.message ?? String(error)}`, { cause: error });
  const message = secrets.diagnostic(own.message);
  const agent = isAgentName(request.agent) ? request.agent : "claude";
  const verdict = secrets.verdict(own.verdict ?? preflightVerdict(agent, message.replace(/\n/g, "; "), own.exitCode, own.faultKind));
  return { verdict, code: own.exitCode, lastWord: clean(message, MAX_WORD_CHARS), runDir: null };
}
