import { defineCommand } from "citty";
import { DEFAULT_MAX_LINE_BYTES, LineFramer } from "../../core/frame.ts";
import { exitCodeFor } from "../../core/verdict.ts";
import { isAgentName } from "../../core/agents.ts";
import { DEFAULT_AGENT } from "../../config/resolve.ts";
import { AGENT_NAMES, adapterOf } from "../../agents/table.ts";
import { isUtf8 } from "node:buffer";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { usageError } from "../errors.ts";
import { outputArgs, positiveInt, verbosityArgs } from "../common.ts";
import { printVerdict } from "../verdict-output.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { progressMode, setVerbosity } from "../output.ts";
import { verdictRecord, type ProgressSink } from "../../core/progress.ts";
import { readChunks } from "../../io/chunks.ts";
import { RUN_FILES } from "../../io/run-folder.ts";
import { foreignRunDir } from "../../io/foreign-run-dir.ts";
import { ledgerArgs, openExistingLedger } from "../ledger-option.ts";
import { projectLedger } from "../agent-options.ts";
import { printable } from "../../core/text.ts";
import { join } from "node:path";
import { namedSession } from "../session-arg.ts";
import type { ReplayedPhase } from "../../agents/adapter.ts";
import { recordedTokens } from "../../agents/stream-phase.ts";

/** A session id (or prefix) as the stream of its latest phase that kept one, the session's agent, and that phase. */
async function sessionStream(args: Record<string, unknown>, id: string): Promise<{ file: string; agent: string; phase: ReplayedPhase }> {
  const choice = await projectLedger(args);
  await using ledger = await openExistingLedger(choice, { readonly: true });
  if (ledger === null) throw usageError(`${printable(id)}: no such file, and no ledger to find a session in (${choice.shown})`);
  const session = await namedSession(ledger, id, `${choice.shown}; nor is it a file`);
  const phases = await ledger.phases(session.id);
  const at = phases.findLastIndex((p) => p.run_dir !== null && existsSync(join(p.run_dir, RUN_FILES.stream)));
  if (at === -1) throw usageError(`session ${session.id} kept no stream (run with --keep-stream on, the default, to keep one)`);
  const runDir = phases[at]!.run_dir!;
  const foreign = foreignRunDir(choice.home, runDir);
  if (foreign !== null)
    throw usageError(`refused: session ${session.id}: ${printable(foreign)} (an imported row may name any folder); nothing was read`);
  return {
    file: join(runDir, RUN_FILES.stream),
    agent: session.agent,
    phase: { sessionId: session.id, runDir, earlier: recordedTokens(phases.slice(0, at)) },
  };
}

export const replayCommand = defineCommand({
  meta: {
    name: "replay",
    description: "Reduce a captured agent stream offline, with the same framer, reducer and judge as a live run",
  },
  args: {
    file: {
      type: "positional",
      required: false,
      description: 'The captured stream, or a session id (or prefix): its latest phase\'s stream.jsonl; "-" or nothing reads stdin',
    },
    agent: {
      type: "enum",
      options: [...AGENT_NAMES],
      description:
        "Whose stream it is (default: the session's agent, else claude; pi: `pi --mode json`, with or without its session header, or an RPC transcript; codex: `codex exec --json`; gemini: `--output-format stream-json`; opencode: `run --format json`)",
    },
    cwd: { type: "string", description: "Show tool paths relative to this folder" },
    home: {
      type: "string",
      description: "State folder, for a session id (else $AGENTPORT_HOME, $XDG_STATE_HOME/agentport, ~/.local/state/agentport)",
    },
    ...ledgerArgs,
    ...outputArgs,
    ...verbosityArgs,
  },
  async run({ args }) {
    const verbosity = setVerbosity(args);
    const maxLineBytes = positiveInt("max-line-bytes", args["max-line-bytes"], DEFAULT_MAX_LINE_BYTES);
    // A session id never has a slash: a path that is not there is a missing file, whatever the ledger holds.
    if (args.file?.includes("/") && !existsSync(args.file)) throw usageError(`${printable(args.file)}: no such file`);
    const source =
      args.file === undefined || args.file === "-" || existsSync(args.file)
        ? { file: args.file, agent: null, phase: undefined }
        : await sessionStream(args, args.file);
    const file = source.file;
    const named = args.agent ?? source.agent;
    const agent = isAgentName(named) ? named : DEFAULT_AGENT;
    // Progress is off by default here: a replay is usually a benchmark or a script.
    const mode: ProgressMode = progressMode<ProgressMode>(args.progress, verbosity, "off");
    const view = progressView(mode, agent);
    // A replay has no process: no exit code, no signal; a session's phase gives the stderr.log it left.
    // No progress shown: the reducer makes no events at all (a replay is often a benchmark).
    const phase = source.phase;
    const sink: ProgressSink = phase === undefined ? view.sink : (event) => view.sink(event, { sessionId: phase.sessionId, agent });
    const replayer = adapterOf(agent).replay(args.cwd ? resolve(args.cwd) : "", mode === "off" ? undefined : sink, phase);
    const framer = new LineFramer(replayer.reducer, maxLineBytes, { isUtf8 });
    readChunks(file, (chunk) => framer.push(chunk));
    framer.end();
    replayer.reducer.streamEnded();
    view.close();
    const verdict = replayer.verdict();
    await printVerdict(verdict, Boolean(args.json));
    // --progress json ends with the verdict's record, as a live run's does.
    view.end(verdictRecord(verdict, exitCodeFor(verdict)));
    return exitCodeFor(verdict);
  },
});
