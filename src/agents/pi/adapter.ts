// pi in the adapter table: `pi --mode json`, the session file named here
// (or --session-id where pi has it), the verdict from the last assistant
// message_end, judged against the request (judge.ts).
import { piCredentials, TESTED } from "../../core/readiness.ts";
import { existsSync } from "node:fs";
import { replayer } from "../../core/replayer.ts";
import { translate, type Translated } from "../../core/translate.ts";
import { environmentError, usageError } from "../../core/errors.ts";
import type { Env } from "../../core/env.ts";
import type { Ledger } from "../../io/ledger.ts";
import { PI_SETTINGS } from "./settings.ts";
import type { AgentAdapter } from "../adapter.ts";
import { findPiSession, piSessionHeader } from "./origin.ts";
import { probePi } from "./probe.ts";
import { piInteractiveArgv, runPi } from "./run.ts";
import { runnerOptions } from "../setup.ts";
import { probePiFindings } from "./doctor.ts";
import { piPreview } from "./preview.ts";
import { route } from "../../core/pi/argv.ts";

async function capabilities(bin: string, ledger: Ledger, env: Env) {
  try {
    return await probePi(bin, ledger, env);
  } catch (error) {
    throw environmentError(`pi probe: ${(error as Error).message}`);
  }
}

export const piAdapter: AgentAdapter = {
  name: "pi",
  axes: {
    injection: "stdin",
    observation: "stream-end",
    state: { lives: "local-jsonl", folders: ["$PI_CODING_AGENT_DIR|~/.pi"] },
    sessionId: "named-file",
  },
  capabilities: { resume: true, interactive: true, send: false },
  verdictReads: "the last assistant `message_end`: `stopReason`, `errorMessage`, usage and cost; the envelope tool's result",
  bin: { command: "pi", env: "AGENTPORT_PI_BIN", install: "npm install -g @mariozechner/pi-coding-agent" },
  fake: "fake-pi",
  envSettings: ["PI_OFFLINE", "PI_SKIP_VERSION_CHECK", "PI_TELEMETRY", "PI_TIMING", "PI_HARDWARE_CURSOR", "PI_CLEAR_ON_SHRINK"],
  settings: PI_SETTINGS,
  bon: { ownSessions: true },
  readiness: { tested: TESTED.pi, credentials: piCredentials },
  translate: (words) => {
    const t = translate("pi", words) as Extract<Translated, { agent: "pi" }>;
    const told = [
      ...(t.model ? [`--model ${t.model}`] : []),
      ...(t.thinking ? [`--thinking ${t.thinking}`] : []),
      ...(t.tools ? [`--tools ${t.tools.join(",")}`] : []),
    ];
    return { translated: t, words: told };
  },
  modelRoute: (model, s) => route(model, s.gateway, s.direct),
  run: async (ledger, setup, turn) => {
    // --permission-mode for pi is refused by the resolver (one line naming --tools), before anything starts.
    const caps = await capabilities(turn.bin, ledger, setup.common.env);
    if (setup.settings.appendSystemPrompt.length > 0 && !caps.flags["--append-system-prompt"]) {
      throw usageError(
        `--append-system-prompt: pi ${caps.version} has no --append-system-prompt; upgrade pi, or put the text in AGENTS.md`,
      );
    }
    const resume = turn.resume;
    if (resume?.session_file && !existsSync(resume.session_file))
      throw usageError(`session ${resume.id}: its pi session file ${resume.session_file} is gone`);
    return runPi(ledger, {
      ...setup.common,
      ...setup.pi,
      sessionDir: resume?.session_dir ?? setup.pi.sessionDir,
      bin: turn.bin,
      caps,
      prompt: turn.prompt,
      model: setup.model ?? resume?.model ?? undefined,
      schema: setup.schema,
      nudges: setup.nudges,
      resume: resume === undefined ? undefined : { id: resume.id, sessionFile: resume.session_file },
      newSessionId: turn.sessionId,
      ...runnerOptions(setup),
      progress: turn.progress,
      signal: turn.signal,
    });
  },
  previewArgv: piPreview,
  interactiveArgv: async (session, bin, ledger, env) => {
    const caps = await capabilities(bin, ledger, env);
    return piInteractiveArgv({
      bin,
      caps,
      sessionId: session.agent_session_id ?? session.id,
      sessionFile: session.session_file,
      sessionDir: session.session_dir,
    });
  },
  sessionFileCwd: (file) => piSessionHeader(file)?.cwd ?? null,
  findSessions: (idOrPrefix, setup) => findPiSession([setup.piSessionDir], idOrPrefix),
  replay: (cwd, emit) => replayer("pi", cwd, emit),
  probe: probePiFindings,
};
