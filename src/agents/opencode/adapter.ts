// opencode in the adapter table: `opencode run --format json`, the prompt on
// stdin, the session id learned from the first record, no terminal record
// (the verdict from the last records and the exit code), per-step tokens and
// opencode's own cost.
import { opencodeCredentials, TESTED } from "../../core/readiness.ts";
import { environmentError, usageError } from "../../core/errors.ts";
import { OpencodeReplayReducer } from "../../core/opencode/replay.ts";
import { judge } from "../../core/judge.ts";
import { NO_PROCESS } from "../../core/outcome.ts";
import type { Ledger } from "../../io/ledger.ts";
import { OPENCODE_SETTINGS } from "./settings.ts";
import type { AgentAdapter, Finding } from "../adapter.ts";
import { cachedCli, missingFlags, probeCli, type CliCapabilities, type CliProbeSpec } from "../cli-probe.ts";
import { serveArgv } from "../../io/opencode-start.ts";
import { streamOptions } from "../stream-phase.ts";
import { axesOf } from "../axes.ts";
import type { AgentSetup } from "../setup.ts";
import { opencodeArgv, opencodeInteractiveArgv } from "./argv.ts";
import { asSession, OpencodeRefusal, resumableSession, runOpencode } from "./run.ts";
import { runOpencodeServe } from "./serve.ts";

export const OPENCODE_FLAGS = ["--format", "--session", "--fork", "--model", "--auto"] as const;
const NEEDED = ["--format", "--session"];

const SERVE_FLAGS = ["--hostname", "--port"] as const;
const versionOf = (out: string): string => /^\s*(\d+\.\d+\.\d+)\s*$/m.exec(out)?.[1] ?? "";

/** `opencode serve --help`: what `--serve` needs. */
function probeServe(bin: string, ledger: Ledger | null): Promise<CliCapabilities> {
  return probeCli(bin, ledger, process.env, { help: ["serve", "--help"], version: versionOf, flags: SERVE_FLAGS });
}

const PROBE: CliProbeSpec = { help: ["run", "--help"], version: versionOf, flags: OPENCODE_FLAGS };

function probe(bin: string, ledger: Ledger | null): Promise<CliCapabilities> {
  return probeCli(bin, ledger, process.env, PROBE);
}

/** opencode's data, state, cache and config folders; its server (`--serve`) keeps the same. */
const OPENCODE_STATE = [
  "$XDG_DATA_HOME/opencode|~/.local/share/opencode",
  "$XDG_STATE_HOME/opencode|~/.local/state/opencode",
  "$XDG_CACHE_HOME/opencode|~/.cache/opencode",
  "$XDG_CONFIG_HOME/opencode|~/.config/opencode",
];

/** The prompt POSTed to a server of agentport's (`--serve`), else on `opencode run`'s stdin. */
const served = (setup: AgentSetup): boolean => axesOf(opencodeAdapter, setup.settings.serve).injection === "http";

export const opencodeAdapter: AgentAdapter = {
  name: "opencode",
  axes: { injection: "stdin", observation: "stream-end", state: { lives: "agent-home", folders: OPENCODE_STATE }, sessionId: "learned" },
  served: { injection: "http", observation: "sse", state: { lives: "remote", folders: OPENCODE_STATE }, sessionId: "learned" },
  capabilities: { resume: true, interactive: true, send: false },
  verdictReads:
    "no terminal record: an `error` record, else the last `step_finish` (`stop` ok; `tool-calls` = an auto-rejected permission; `unknown` = a cut stream) and the exit code; `--serve`: the session's events until `session.idle` (the last assistant message's `finish` and `error`, `session.error`)",
  bin: { command: "opencode", env: "AGENTPORT_OPENCODE_BIN", install: "npm install -g opencode-ai" },
  fake: "fake-opencode",
  envSettings: ["OPENCODE_DISABLE_AUTOUPDATE", "OPENCODE_DISABLE_LSP_DOWNLOAD"],
  settings: OPENCODE_SETTINGS,
  bon: { ownSessions: true },
  readiness: { tested: TESTED.opencode, credentials: opencodeCredentials },
  // The model is opencode's own `provider/model`; no thinking or tool words on its command line.
  translate: (words) => ({
    translated: { agent: "opencode", model: words.model, env: {} },
    words: words.model ? [`-m ${words.model}`] : [],
  }),
  run: async (ledger, setup, turn) => {
    let caps: CliCapabilities;
    try {
      caps = await probe(turn.bin, ledger);
    } catch (error) {
      throw environmentError(`opencode probe: ${(error as Error).message}`);
    }
    const missing = missingFlags(caps, NEEDED);
    if (missing.length > 0)
      throw environmentError(`opencode ${caps.version} has no ${missing.join(", ")}: agentport needs opencode 1.18.33 or newer`);
    try {
      const request = {
        ...setup.common,
        ...streamOptions(setup, turn),
        agentVersion: caps.version,
        bin: turn.bin,
        prompt: turn.prompt,
        resume: turn.resume,
        progress: turn.progress,
        signal: turn.signal,
      };
      return await (served(setup) ? runOpencodeServe(ledger, request) : runOpencode(ledger, request));
    } catch (error) {
      if (error instanceof OpencodeRefusal) throw usageError(error.message);
      throw error;
    }
  },
  previewArgv: async (setup, bin, ledger) => {
    const caps = await cachedCli(bin, ledger, PROBE);
    const o = streamOptions(setup, { bin, prompt: "" });
    const argv = served(setup)
      ? serveArgv(bin)
      : opencodeArgv({ bin, model: o.model, thinking: o.thinking, permissionMode: o.permissionMode, agentArgs: o.agentArgs });
    return { argv, probed: caps?.version ?? null };
  },
  interactiveArgv: async (session, bin) => {
    try {
      return opencodeInteractiveArgv(bin, resumableSession(session));
    } catch (error) {
      throw usageError((error as Error).message);
    }
  },
  // opencode keeps its sessions in its own SQLite database: none is found on disk by id.
  findSessions: () => [],
  replay: (cwd, emit, phase) => {
    // A `--serve` run keeps serve events in its stream.jsonl: the first record says which.
    const reducer = new OpencodeReplayReducer({ cwd, emit });
    const reduction = () => {
      const read = phase === undefined ? reducer.reduction() : asSession(reducer.reduction(), phase.sessionId);
      return reducer.serve ? { ...read, summary: { ...read.summary, serve: true } } : read;
    };
    return { reducer, verdict: () => judge({ agent: "opencode", reduction: reduction(), proc: NO_PROCESS }).verdict };
  },
  probe: async (bin, ledger): Promise<Finding[]> => {
    try {
      const caps = await probe(bin, ledger);
      const missing = missingFlags(caps, NEEDED);
      const serve = missingFlags(await probeServe(bin, ledger), [...SERVE_FLAGS]);
      return [
        {
          check: "opencode",
          ok: missing.length === 0,
          version: caps.version,
          detail: `${bin}: opencode ${caps.version}; flags: ${OPENCODE_FLAGS.filter((f) => caps.flags[f]).join(" ")}`,
          fix: missing.length > 0 ? `upgrade opencode: it lacks ${missing.join(", ")}` : undefined,
        },
        {
          check: "opencode serve",
          ok: serve.length === 0,
          detail: serve.length === 0 ? "`opencode serve --hostname --port`: --serve can run" : `opencode serve lacks ${serve.join(", ")}`,
          fix: serve.length > 0 ? "upgrade opencode (1.18.33 or newer) to use --serve" : undefined,
        },
      ];
    } catch (error) {
      return [
        {
          check: "opencode",
          ok: false,
          detail: `${bin}: ${(error as Error).message}`,
          fix: "check that this binary is opencode (`opencode --version` prints X.Y.Z)",
        },
      ];
    }
  },
};
