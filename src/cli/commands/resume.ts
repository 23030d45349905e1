import { defineCommand } from "citty";
import { realpathSync, existsSync } from "node:fs";
import { runClaude } from "../../agents/claude-run.ts";
import { runPi } from "../../agents/pi-run.ts";
import type { RunOutcome } from "../../agents/phase.ts";
import { claudeConfigDir, findClaudeSession, findPiSession } from "../../agents/origin.ts";
import type { Ledger, SessionRow } from "../../io/ledger.ts";
import { EXIT, type Verdict } from "../../core/verdict.ts";
import { agentArgs, claudeBin, commonOptions, envelopeSchema, folder, openLedger, piBin, piCapabilities, piOptions } from "../agent-options.ts";
import { CliError, usageError } from "../errors.ts";
import { readPrompt } from "../prompt.ts";
import { printVerdict } from "../verdict-output.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { setVerbosity, writeResult } from "../output.ts";
import { interruptSignal } from "../interrupt.ts";
import { list } from "../common.ts";

const real = (path: string): string => (existsSync(path) ? realpathSync(path) : path);

/** The session: from the ledger, else from the agents' own files (then declared, so the ledger knows it next time). */
function findSession(ledger: Ledger, idOrPrefix: string, piDirs: string[]): SessionRow {
  const resolved = ledger.resolveSession(idOrPrefix);
  if (resolved.kind === "found") return resolved.session;
  if (resolved.kind === "ambiguous") {
    const lines = resolved.candidates.slice(0, 10).map((s) => `  ${s.id}  ${s.agent}  ${s.cwd}  ${s.declared_at}`);
    throw usageError(`"${idOrPrefix}" matches ${resolved.candidates.length} sessions; give more of the id:\n${lines.join("\n")}`);
  }
  const found = [...findPiSession(piDirs, idOrPrefix), ...findClaudeSession(claudeConfigDir(), idOrPrefix)];
  if (found.length > 1) throw usageError(`"${idOrPrefix}" matches ${found.length} sessions on disk; give more of the id`);
  const only = found[0];
  if (only === undefined) throw usageError(`no session "${idOrPrefix}" in the ledger (${ledger.path}) nor in the agents' session folders`);
  return ledger.declareSession({ id: only.id, agent: only.agent, cwd: only.cwd, agentSessionId: only.id, sessionFile: only.sessionFile });
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
    description: "Continue a session by id (or unique prefix) with the same agent and model, only from the folder it was born in",
  },
  args: {
    id: { type: "positional", required: true, description: "Session id or a unique prefix of it (see agentport sessions)" },
    prompt: { type: "positional", required: false, description: 'The prompt; "-" or nothing reads it from stdin' },
    ...agentArgs,
  },
  async run({ args }) {
    const verbosity = setVerbosity(args);
    const cwd = folder(args.cwd);
    const common = commonOptions(args, cwd);
    using ledger = openLedger(common.home);
    const pi = piOptions(args, common.home);
    const session = findSession(ledger, args.id, [pi.sessionDir]);
    // The birth-folder rule, before any process starts: zero tokens.
    if (real(session.cwd) !== cwd) {
      const reason = `refused: session ${session.id} (${session.agent}) was born in ${session.cwd}, not in ${cwd}; resume it from its birth folder (cd ${session.cwd}, or --cwd ${session.cwd})`;
      if (args.json) await writeResult(JSON.stringify(refusedVerdict(session, reason)));
      throw new CliError(reason, EXIT.refused);
    }
    const prompt = await readPrompt(args.prompt);
    const schema = envelopeSchema(args);
    const mode: ProgressMode = verbosity === "quiet" ? "off" : ((args.progress as ProgressMode | undefined) ?? "auto");
    const view = progressView(mode, session.agent);
    const model = args.model ?? session.model ?? undefined;
    let outcome: RunOutcome;
    if (session.agent === "pi") {
      const bin = piBin(args);
      const caps = await piCapabilities(bin, ledger, common.env);
      if (session.session_file !== null && !existsSync(session.session_file)) {
        throw usageError(`session ${session.id}: its pi session file ${session.session_file} is gone`);
      }
      outcome = await runPi(ledger, {
        ...common,
        ...pi,
        sessionDir: session.session_dir ?? pi.sessionDir,
        bin,
        caps,
        prompt,
        model,
        schema,
        resume: { id: session.id, sessionFile: session.session_file },
        progress: view.sink,
        signal: interruptSignal(),
      });
    } else {
      outcome = await runClaude(ledger, {
        ...common,
        bin: claudeBin(args),
        prompt,
        model,
        tools: list(args.tools),
        schema,
        resumeId: session.agent_session_id ?? session.id,
        progress: view.sink,
        signal: interruptSignal(),
      });
    }
    view.close();
    await printVerdict(outcome.verdict, Boolean(args.json), outcome.runDir);
    return outcome.exitCode;
  },
});
