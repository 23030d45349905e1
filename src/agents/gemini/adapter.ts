// Gemini CLI in the adapter table: `gemini --output-format stream-json`, the
// prompt on stdin, the session id chosen here, the verdict from
// result.status, one process (no relaunch) killed with all its descendants.
import { environmentError } from "../../cli/errors.ts";
import { GeminiReducer } from "../../core/gemini/reducer.ts";
import { judge } from "../../core/judge.ts";
import { NO_PROCESS } from "../../core/outcome.ts";
import type { Ledger } from "../../io/ledger.ts";
import type { AgentAdapter, Finding } from "../adapter.ts";
import { missingFlags, probeCli, type CliCapabilities } from "../cli-probe.ts";
import { streamOptions } from "../stream-phase.ts";
import { GEMINI_ENV, GEMINI_TOOLS, geminiInteractiveArgv, geminiModel } from "./argv.ts";
import { findGeminiSession, geminiDir } from "./origin.ts";
import { runGemini } from "./run.ts";

export const GEMINI_FLAGS = ["--output-format", "--session-id", "--resume", "--skip-trust", "--approval-mode", "--model", "--allowed-tools"] as const;
const NEEDED = ["--output-format", "--session-id", "--resume"];

function probe(bin: string, ledger: Ledger | null): Promise<CliCapabilities> {
  return probeCli(bin, ledger, process.env, { help: ["--help"], version: (out) => /^\s*(\d+\.\d+\.\d+)\s*$/m.exec(out)?.[1] ?? "", flags: GEMINI_FLAGS, env: GEMINI_ENV });
}

export const geminiAdapter: AgentAdapter = {
  name: "gemini",
  axes: { injection: "stdin", observation: "stream-end", state: "agent-project-folder", sessionId: "chosen" },
  capabilities: { resume: true, interactive: true, send: false },
  verdictReads: "`result.status` (never the exit code); no result record: killed",
  bin: { command: "gemini", env: "AGENTPORT_GEMINI_BIN", install: "npm install -g @google/gemini-cli" },
  fake: "fake-gemini",
  // gemini takes no thinking budget on its command line; its model is always pinned.
  translate: (words) => {
    const model = geminiModel(words.model);
    const tools = words.tools && words.tools.length > 0 ? [...new Set(words.tools.map((t) => GEMINI_TOOLS[t] ?? t))] : undefined;
    const told = [`-m ${model}`, ...(tools ? [`--allowed-tools ${tools.join(",")}`] : []), ...Object.entries(GEMINI_ENV).map(([k, v]) => `${k}=${v}`)];
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
    if (missing.length > 0) throw environmentError(`gemini ${caps.version} has no ${missing.join(", ")}: agentport needs gemini-cli 0.61.0 or newer`);
    return runGemini(ledger, {
      ...setup.common,
      ...streamOptions(setup, turn, false),
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
  interactiveArgv: async (session, bin) => geminiInteractiveArgv(bin, session.agent_session_id ?? session.id, session.model),
  findSessions: (idOrPrefix) => findGeminiSession(geminiDir(), idOrPrefix),
  replay: (cwd, emit) => {
    const reducer = new GeminiReducer({ cwd, emit });
    return { reducer, verdict: () => judge({ agent: "gemini", reduction: reducer.reduction(), proc: NO_PROCESS }).verdict };
  },
  probe: async (bin, ledger): Promise<Finding[]> => {
    try {
      const caps = await probe(bin, ledger);
      const missing = missingFlags(caps, NEEDED);
      return [{ check: "gemini", ok: missing.length === 0, detail: `${bin}: gemini ${caps.version}; flags: ${GEMINI_FLAGS.filter((f) => caps.flags[f]).join(" ")}`, fix: missing.length > 0 ? `upgrade gemini: it lacks ${missing.join(", ")}` : undefined }];
    } catch (error) {
      return [{ check: "gemini", ok: false, detail: `${bin}: ${(error as Error).message}`, fix: "check that this binary is gemini (`gemini --version` prints X.Y.Z)" }];
    }
  },
};
