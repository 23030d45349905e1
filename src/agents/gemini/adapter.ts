// Gemini CLI in the adapter table: `gemini --output-format stream-json`, the
// prompt on stdin, the session id chosen here, the verdict from
// result.status, one process (no relaunch) killed with all its descendants.
import { geminiCredentials, TESTED } from "../../core/readiness.ts";
import { environmentError } from "../../core/errors.ts";
import { replayer } from "../../core/replayer.ts";
import type { Ledger } from "../../io/ledger.ts";
import { GEMINI_SETTINGS } from "./settings.ts";
import { SESSION_PLACEHOLDER, type AgentAdapter, type Finding } from "../adapter.ts";
import { cachedCli, missingFlags, probeCli, type CliCapabilities, type CliProbeSpec } from "../cli-probe.ts";
import { streamOptions } from "../stream-phase.ts";
import { GEMINI_ENV, GEMINI_TOOLS, geminiArgv, geminiInteractiveArgv, geminiModel } from "./argv.ts";
import { findGeminiSession, geminiDir } from "./origin.ts";
import { runGemini } from "./run.ts";

export const GEMINI_FLAGS = [
  "--output-format",
  "--session-id",
  "--resume",
  "--skip-trust",
  "--approval-mode",
  "--model",
  "--allowed-tools",
] as const;
const NEEDED = ["--output-format", "--session-id", "--resume"];

const PROBE: CliProbeSpec = {
  help: ["--help"],
  version: (out) => /^\s*(\d+\.\d+\.\d+)\s*$/m.exec(out)?.[1] ?? "",
  flags: GEMINI_FLAGS,
  env: GEMINI_ENV,
};

function probe(bin: string, ledger: Ledger | null): Promise<CliCapabilities> {
  return probeCli(bin, ledger, process.env, PROBE);
}

export const geminiAdapter: AgentAdapter = {
  name: "gemini",
  axes: {
    injection: "stdin",
    observation: "stream-end",
    state: { lives: "agent-project-folder", folders: ["~/.gemini"] },
    sessionId: "chosen",
  },
  capabilities: { resume: true, interactive: true, send: false },
  verdictReads: "`result.status` (never the exit code); no result record: killed",
  bin: { command: "gemini", env: "AGENTPORT_GEMINI_BIN", install: "npm install -g @google/gemini-cli" },
  fake: "fake-gemini",
  envSettings: ["GEMINI_MODEL"],
  settings: GEMINI_SETTINGS,
  readiness: { tested: TESTED.gemini, credentials: geminiCredentials },
  // gemini takes no thinking budget on its command line; its model is always pinned.
  translate: (words) => {
    const model = geminiModel(words.model);
    const tools = words.tools && words.tools.length > 0 ? [...new Set(words.tools.map((t) => GEMINI_TOOLS[t] ?? t))] : undefined;
    const told = [
      `-m ${model}`,
      ...(tools ? [`--allowed-tools ${tools.join(",")}`] : []),
      ...Object.entries(GEMINI_ENV).map(([k, v]) => `${k}=${v}`),
    ];
    return { translated: { agent: "gemini", model, tools, env: { ...GEMINI_ENV } }, words: told };
  },
  run: async (ledger, setup, turn) => {
    let caps: CliCapabilities;
    try {
      caps = await probe(turn.bin, ledger);
    } catch (error) {
      throw environmentError(`gemini probe: ${(error as Error).message}`);
    }
    const missing = missingFlags(caps, NEEDED);
    if (missing.length > 0)
      throw environmentError(`gemini ${caps.version} has no ${missing.join(", ")}: agentport needs gemini-cli 0.61.0 or newer`);
    return runGemini(ledger, {
      ...setup.common,
      ...streamOptions(setup, turn),
      // A project config applies only once the user trusts it (or named it): then the folder is trusted.
      trusted: setup.config !== null,
      agentVersion: caps.version,
      bin: turn.bin,
      prompt: turn.prompt,
      resume: turn.resume,
      progress: turn.progress,
      signal: turn.signal,
    });
  },
  previewArgv: async (setup, bin, ledger) => {
    const caps = await cachedCli(bin, ledger, PROBE);
    const o = streamOptions(setup, { bin, prompt: "" });
    const argv = geminiArgv({
      bin,
      sessionId: SESSION_PLACEHOLDER,
      resume: false,
      model: o.model,
      tools: o.tools,
      permissionMode: o.permissionMode,
      trusted: setup.config !== null,
      agentArgs: o.agentArgs,
    });
    return { argv, probed: caps?.version ?? null };
  },
  interactiveArgv: async (session, bin) => geminiInteractiveArgv(bin, session.agent_session_id ?? session.id, session.model),
  findSessions: (idOrPrefix) => findGeminiSession(geminiDir(), idOrPrefix),
  replay: (cwd, emit) => replayer("gemini", cwd, emit),
  probe: async (bin, ledger): Promise<Finding[]> => {
    try {
      const caps = await probe(bin, ledger);
      const missing = missingFlags(caps, NEEDED);
      return [
        {
          check: "gemini",
          ok: missing.length === 0,
          version: caps.version,
          detail: `${bin}: gemini ${caps.version}; flags: ${GEMINI_FLAGS.filter((f) => caps.flags[f]).join(" ")}`,
          fix: missing.length > 0 ? `upgrade gemini: it lacks ${missing.join(", ")}` : undefined,
        },
      ];
    } catch (error) {
      return [
        {
          check: "gemini",
          ok: false,
          detail: `${bin}: ${(error as Error).message}`,
          fix: "check that this binary is gemini (`gemini --version` prints X.Y.Z)",
        },
      ];
    }
  },
};
