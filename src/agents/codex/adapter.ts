// Codex CLI in the adapter table: `codex exec --json`, the prompt on stdin,
// the thread id learned from thread.started, the verdict from
// turn.completed / turn.failed, the refusals from stderr.
import { codexCredentials, TESTED } from "../../core/readiness.ts";
import { environmentError, usageError } from "../../core/errors.ts";
import { CodexReducer } from "../../core/codex/reducer.ts";
import { judge } from "../../core/judge.ts";
import { NO_PROCESS } from "../../core/outcome.ts";
import type { Ledger } from "../../io/ledger.ts";
import { CODEX_SETTINGS } from "./settings.ts";
import { RUN_FOLDER_PLACEHOLDER, type AgentAdapter, type Finding } from "../adapter.ts";
import { cachedCli, missingFlags, probeCli, type CliCapabilities, type CliProbeSpec } from "../cli-probe.ts";
import { workTreeTop } from "../../io/git.ts";
import { readStderr, streamOptions } from "../stream-phase.ts";
import { CODEX_EFFORT, codexArgv, codexInteractiveArgv, codexModel } from "./argv.ts";
import { codexHome, findCodexSession } from "./origin.ts";
import { CodexRefusal, resumableThread, runCodex } from "./run.ts";

export const CODEX_FLAGS = ["--json", "--skip-git-repo-check", "--sandbox", "--output-schema", "--model"] as const;
const NEEDED = ["--json", "--skip-git-repo-check"];

const PROBE: CliProbeSpec = {
  help: ["exec", "--help"],
  version: (out) => /codex-cli (\d+\.\d+\.\d+)/.exec(out)?.[1] ?? "",
  flags: CODEX_FLAGS,
};

function probe(bin: string, ledger: Ledger | null): Promise<CliCapabilities> {
  return probeCli(bin, ledger, process.env, PROBE);
}

async function capabilities(bin: string, ledger: Ledger): Promise<CliCapabilities> {
  let caps: CliCapabilities;
  try {
    caps = await probe(bin, ledger);
  } catch (error) {
    throw environmentError(`codex probe: ${(error as Error).message}`);
  }
  const missing = missingFlags(caps, NEEDED);
  if (missing.length > 0)
    throw environmentError(`codex ${caps.version} has no ${missing.join(", ")}: agentport needs codex-cli 0.169.0 or newer`);
  return caps;
}

export const codexAdapter: AgentAdapter = {
  name: "codex",
  axes: {
    injection: "stdin",
    observation: "stream-end",
    state: { lives: "agent-home", folders: ["$CODEX_HOME|~/.codex"] },
    sessionId: "learned",
  },
  capabilities: { resume: true, interactive: true, send: false },
  verdictReads:
    "`turn.completed` (ok) or `turn.failed` (its message); neither: killed. Refusals: stderr's `ERROR codex_core::tools::router` lines",
  bin: { command: "codex", env: "AGENTPORT_CODEX_BIN", install: "npm install -g @openai/codex" },
  fake: "fake-codex",
  envSettings: ["OPENAI_ORGANIZATION", "OPENAI_PROJECT"],
  settings: CODEX_SETTINGS,
  readiness: { tested: TESTED.codex, credentials: codexCredentials },
  // codex has no tool allowlist: the sandbox (--permission-mode) bounds it.
  translate: (words) => {
    const model = words.model === undefined ? undefined : codexModel(words.model);
    const thinking = words.thinking === undefined ? undefined : CODEX_EFFORT[words.thinking];
    return {
      translated: { agent: "codex", model, thinking, env: {} },
      words: [...(model ? [`-m ${model}`] : []), ...(thinking ? [`-c model_reasoning_effort="${thinking}"`] : [])],
    };
  },
  run: async (ledger, setup, turn) => {
    const caps = await capabilities(turn.bin, ledger);
    try {
      return await runCodex(ledger, {
        ...setup.common,
        ...streamOptions(setup, turn),
        outputSchema: caps.flags["--output-schema"] === true,
        agentVersion: caps.version,
        bin: turn.bin,
        prompt: turn.prompt,
        resume: turn.resume,
        progress: turn.progress,
        signal: turn.signal,
      });
    } catch (error) {
      if (error instanceof CodexRefusal) throw usageError(error.message);
      throw error;
    }
  },
  previewArgv: async (setup, bin, ledger) => {
    const caps = await cachedCli(bin, ledger, PROBE);
    const o = streamOptions(setup, { bin, prompt: "" });
    const outputSchema =
      o.schema && caps?.flags["--output-schema"] !== false ? `${RUN_FOLDER_PLACEHOLDER}/envelope.schema.json` : undefined;
    const inGit = (await workTreeTop(setup.common.cwd)) !== null;
    const argv = codexArgv({
      bin,
      model: o.model,
      thinking: o.thinking,
      permissionMode: o.permissionMode,
      inGit,
      outputSchema,
      appendSystemPrompt: o.appendSystemPrompt,
      agentArgs: o.agentArgs,
    });
    return { argv, probed: caps?.version ?? null };
  },
  interactiveArgv: async (session, bin) => {
    try {
      return codexInteractiveArgv(bin, resumableThread(session));
    } catch (error) {
      throw usageError((error as Error).message);
    }
  },
  findSessions: (idOrPrefix) => findCodexSession(codexHome(), idOrPrefix),
  replay: (cwd, emit, phase) => {
    const reducer = new CodexReducer({ cwd, emit, previous: phase?.earlier ?? null });
    const verdict = () => {
      if (phase === undefined) return judge({ agent: "codex", reduction: reducer.reduction(), proc: NO_PROCESS }).verdict;
      // As the live run: the refusals from its stderr, agentport's session in the verdict.
      reducer.takeStderr(readStderr(phase.runDir));
      return judge({ agent: "codex", reduction: { ...reducer.reduction(), sessionId: phase.sessionId }, proc: NO_PROCESS }).verdict;
    };
    return { reducer, verdict };
  },
  probe: async (bin, ledger): Promise<Finding[]> => {
    try {
      const caps = await probe(bin, ledger);
      const missing = missingFlags(caps, NEEDED);
      return [
        {
          check: "codex",
          ok: missing.length === 0,
          version: caps.version,
          detail: `${bin}: codex-cli ${caps.version}; flags: ${CODEX_FLAGS.filter((f) => caps.flags[f]).join(" ")}`,
          fix: missing.length > 0 ? `upgrade codex: it lacks ${missing.join(", ")}` : undefined,
        },
      ];
    } catch (error) {
      return [
        {
          check: "codex",
          ok: false,
          detail: `${bin}: ${(error as Error).message}`,
          fix: "check that this binary is codex (`codex --version` prints codex-cli X.Y.Z)",
        },
      ];
    }
  },
};
