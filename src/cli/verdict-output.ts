// The end of a run on the terminal: the result on stdout, the reason on stderr.
// The verdict passes the redactor first; the answer goes out as it is to a
// pipe or a file, and without escape sequences other than colour to a terminal.
import { refusalGuidance } from "../core/refusal.ts";
import { SCHEMA_VERSION, type Verdict } from "../core/verdict.ts";
import { secrets } from "../core/redact.ts";
import { safeJson, terminalText } from "../core/text.ts";
import { UnrecordedVerdict, type RunOutcome } from "../agents/phase.ts";
import { afterVerdict, environmentError } from "./errors.ts";
import { appendVerdictRecord, writeVerdict } from "../io/run-folder.ts";
import { verdictRecord } from "../core/progress.ts";
import { spendParts } from "../core/totals.ts";
import type { ProgressView } from "./progress-view.ts";
import { log, writeResult } from "./output.ts";
import { isTerminal } from "./fd-out.ts";
import { realpathSync } from "node:fs";

/**
 * Run, then print the verdict and return its exit code. A verdict the ledger
 * would not take (a full disk) is printed all the same, then the one line
 * that says so (exit 5).
 */
export async function reportRun(
  run: () => Promise<RunOutcome>,
  json: boolean,
  progress: Pick<ProgressView, "close" | "end">,
  again?: ResumeHint,
): Promise<number> {
  let outcome: RunOutcome;
  let unrecorded: UnrecordedVerdict | null = null;
  try {
    outcome = await run();
  } catch (error) {
    if (!(error instanceof UnrecordedVerdict)) throw error;
    unrecorded = error;
    outcome = error.outcome;
  }
  const last = keepVerdict(outcome);
  progress.close();
  await printVerdict(outcome.verdict, json, outcome.runDir, unrecorded === null, again);
  progress.end(last);
  if (unrecorded !== null) throw afterVerdict(environmentError(secrets.diagnostic(unrecorded.message)));
  return outcome.exitCode;
}

/** The last phase's folder keeps the run's verdict (after nudges: the run's, not the phase's), and its progress ends with it: that record. */
export function keepVerdict(outcome: RunOutcome): Record<string, unknown> {
  writeVerdict(outcome.runDir, outcome.verdict);
  const last = verdictRecord(outcome.verdict, outcome.exitCode);
  appendVerdictRecord(outcome.runDir, last);
  return last;
}

export async function printVerdict(raw: Verdict, json: boolean, runDir?: string, summary = true, again?: ResumeHint): Promise<void> {
  const verdict = secrets.verdict(raw);
  if (json) await writeResult(safeJson(verdict));
  else if (verdict.ok && verdict.text !== null) await writeResult(isTerminal(1) ? terminalText(verdict.text) : verdict.text);
  if (!summary) return;
  if (!verdict.ok) log.error(`${verdict.status}: ${verdict.failure?.message ?? "no reason given"}`);
  else if (typeof verdict.summary.warning === "string") log.warn(`after the envelope: ${verdict.summary.warning}`);
  for (const line of refusalGuidance(verdict)) log.warn(line);
  if (verdict.status === "parked") log.warn(parkedGuidance(verdict));
  log.info(
    [
      `${verdict.agent} ${verdict.status}`,
      ...spendParts(verdict.cost_micro_usd, verdict.tokens),
      ...(verdict.session_id ? [`session ${verdict.session_id}`] : []),
    ].join(" · "),
  );
  if (runDir) log.debug(`run folder: ${runDir}`);
  // A run that failed, was stopped or interrupted ends with the command that takes it up again.
  if (!verdict.ok && verdict.session_id !== null && again !== undefined) log.info(`to resume: ${again(verdict.session_id)}`);
}

/** The command that resumes a session, given its id. */
export type ResumeHint = (sessionId: string) => string;

/**
 * How to resume from here: the session's id, and only the flags that find it
 * again (its birth folder when this is another, the state folder, ledger and
 * config named on the command line); the request comes back from the ledger.
 */
export function resumeHint(args: Record<string, unknown>, sessionCwd: string): ResumeHint {
  const flags: string[] = [];
  if (realpathOr(process.cwd()) !== sessionCwd) flags.push("--cwd", sessionCwd);
  for (const name of ["home", "ledger", "config"]) {
    const value = args[name];
    if (typeof value === "string" && value !== "") flags.push(`--${name}`, value);
  }
  return (id) => `${shownArgv(["agentport", "resume", id, ...flags])} "<next prompt>"`;
}

function realpathOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** A parked run: when it may go on, and the command that waits for that and resumes. */
export function parkedGuidance(verdict: Verdict): string {
  const when = verdict.resume_after === null ? "its usage limit resets (the time was not given)" : verdict.resume_after;
  const id = verdict.session_id ?? "<session id>";
  return `parked until ${when}; to go on then: agentport resume --when-ready ${id} 'Continue where you left off.'`;
}

/** An argv as a shell would show it, secrets redacted: what `config` and `--verbose` print. */
export function shownArgv(argv: readonly string[]): string {
  const quote = (word: string) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`);
  return argv.map((word) => quote(secrets.text(word))).join(" ");
}

/** With --verbose: the exact command line agentport runs. */
export function showArgv(argv: readonly string[]): void {
  log.debug(`argv: ${shownArgv(argv)}`);
}

/**
 * A run, resume or bon that ended before any agent started (a usage error, a
 * missing binary, a refusal): with --json, still one object of the verdict's
 * shape, so a script parses one thing on every exit.
 */
export function preflightVerdict(agent: Verdict["agent"], message: string, exitCode: number, faultKind = "environment"): Verdict {
  return {
    schema_version: SCHEMA_VERSION,
    agent,
    session_id: null,
    status: exitCode === 3 ? "refused" : "failed",
    ok: false,
    text: null,
    envelope: null,
    failure: { kind: exitCode === 3 ? "refused" : exitCode === 5 ? "environment" : exitCode === 2 ? "usage" : "internal", message },
    stop_reason: null,
    cost_micro_usd: 0,
    // Nothing ran: agentport itself knows the cost is 0.
    cost_source: "reported",
    tokens: { input: 0, output: 0, cache_read: 0, cache_write: 0 },
    refused: [],
    env_fault: exitCode === 5,
    fault: exitCode === 5 ? { kind: faultKind, evidence: message.slice(0, 200) } : null,
    changes: null,
    resume_after: null,
    agent_version: null,
    agent_version_tested: false,
    summary: { preflight: true, exit_code: exitCode },
  };
}
