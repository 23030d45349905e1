import { defineCommand } from "citty";
import { ClaudeReducer } from "../../core/claude/reducer.ts";
import { DEFAULT_MAX_LINE_BYTES, LineFramer } from "../../core/frame.ts";
import { envelopeFromTool } from "../../core/envelope.ts";
import { judge } from "../../core/judge.ts";
import { NO_PROCESS } from "../../core/outcome.ts";
import { ENVELOPE_TOOL, PiReducer } from "../../core/pi/reducer.ts";
import { exitCodeFor, type Verdict } from "../../core/verdict.ts";
import { isUtf8 } from "node:buffer";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { usageError } from "../errors.ts";
import { outputArgs, positiveInt, verbosityArgs } from "../common.ts";
import { printVerdict } from "../verdict-output.ts";
import { progressView, type ProgressMode } from "../progress-view.ts";
import { setVerbosity } from "../output.ts";
import { readChunks } from "../../io/chunks.ts";


export const replayCommand = defineCommand({
  meta: {
    name: "replay",
    description: "Reduce a captured agent stream offline, with the same framer, reducer and judge as a live run",
  },
  args: {
    file: { type: "positional", required: false, description: 'The captured stream; "-" or nothing reads stdin' },
    agent: { type: "enum", options: ["claude", "pi"], default: "claude", description: "Whose stream it is (pi: a `pi --mode json` stream)" },
    cwd: { type: "string", description: "Show tool paths relative to this folder" },
    ...outputArgs,
    ...verbosityArgs,
  },
  async run({ args }) {
    const verbosity = setVerbosity(args);
    const maxLineBytes = positiveInt("max-line-bytes", args["max-line-bytes"], DEFAULT_MAX_LINE_BYTES);
    const file = args.file;
    if (file !== undefined && file !== "-" && !existsSync(file)) throw usageError(`${file}: no such file`);
    const agent = args.agent === "pi" ? "pi" : "claude";
    // Progress is off by default here: a replay is usually a benchmark or a script.
    const mode: ProgressMode = verbosity === "quiet" ? "off" : ((args.progress as ProgressMode | undefined) ?? "off");
    const view = progressView(mode, agent);
    const cwd = args.cwd ? resolve(args.cwd) : "";
    const reducer = agent === "pi" ? new PiReducer({ cwd, emit: view.sink }) : new ClaudeReducer({ cwd, emit: view.sink });
    const framer = new LineFramer(reducer, maxLineBytes, { isUtf8 });
    readChunks(file, (chunk) => framer.push(chunk));
    framer.end();
    reducer.streamEnded();
    view.close();
    // A replay has no process: no exit code, no signal, no stderr.
    let verdict: Verdict;
    if (reducer instanceof PiReducer) {
      const reading = reducer.reduction();
      const envelope = { check: null, delivered: envelopeFromTool(ENVELOPE_TOOL, reading.envelope, reading.envelopeError), nudges: 0 };
      verdict = judge({ agent: "pi", reduction: reading, proc: NO_PROCESS, envelope }).verdict;
    } else {
      verdict = judge({ agent: "claude", reduction: reducer.reduction(), proc: NO_PROCESS }).verdict;
    }
    await printVerdict(verdict, Boolean(args.json));
    return exitCodeFor(verdict);
  },
});
