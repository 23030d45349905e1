import { defineCommand } from "citty";
import { DEFAULT_MAX_LINE_BYTES, LineFramer } from "../../core/frame.ts";
import { exitCodeFor } from "../../core/verdict.ts";
import { isAgentName } from "../../core/agents.ts";
import { AGENT_NAMES, adapterOf } from "../../agents/table.ts";
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
    agent: { type: "enum", options: [...AGENT_NAMES], default: "claude", description: "Whose stream it is (pi: `pi --mode json`; codex: `codex exec --json`; gemini: `--output-format stream-json`; opencode: `run --format json`)" },
    cwd: { type: "string", description: "Show tool paths relative to this folder" },
    ...outputArgs,
    ...verbosityArgs,
  },
  async run({ args }) {
    const verbosity = setVerbosity(args);
    const maxLineBytes = positiveInt("max-line-bytes", args["max-line-bytes"], DEFAULT_MAX_LINE_BYTES);
    const file = args.file;
    if (file !== undefined && file !== "-" && !existsSync(file)) throw usageError(`${file}: no such file`);
    const agent = isAgentName(args.agent) ? args.agent : "claude";
    // Progress is off by default here: a replay is usually a benchmark or a script.
    const mode: ProgressMode = verbosity === "quiet" ? "off" : ((args.progress as ProgressMode | undefined) ?? "off");
    const view = progressView(mode, agent);
    // A replay has no process: no exit code, no signal, no stderr.
    const replayer = adapterOf(agent).replay(args.cwd ? resolve(args.cwd) : "", view.sink);
    const framer = new LineFramer(replayer.reducer, maxLineBytes, { isUtf8 });
    readChunks(file, (chunk) => framer.push(chunk));
    framer.end();
    replayer.reducer.streamEnded();
    view.close();
    const verdict = replayer.verdict();
    await printVerdict(verdict, Boolean(args.json));
    return exitCodeFor(verdict);
  },
});
