// Any ACP agent in the adapter table (`--agent acp --acp-command 'gemini
// --acp'`): JSON-RPC 2.0 on its stdin/stdout, the session id agentport's (the
// agent's own bound when session/new answers), the verdict from the prompt's
// stopReason, permission requests answered by --permission-mode.
import { acpCredentials, TESTED } from "../../core/readiness.ts";
import { environmentError, usageError } from "../../core/errors.ts";
import { replayer } from "../../core/replayer.ts";
import { VERSION } from "../../version.ts";
import type { AgentSetup } from "../setup.ts";
import type { AgentAdapter } from "../adapter.ts";
import { resolveBin } from "../resolve-bin.ts";
import { streamOptions } from "../stream-phase.ts";
import { runAcp } from "./run.ts";
import { ACP_SETTINGS } from "./settings.ts";

/** The ACP agent's argv from --acp-command (or the roster's acp_command), its binary found on PATH. */
export function acpArgv(setup: Pick<AgentSetup, "settings">): string[] {
  const command = setup.settings.acpCommand;
  if (command === null || command.length === 0) throw usageError("--agent acp needs the ACP agent's command: --acp-command 'gemini --acp'");
  const [name = "", ...rest] = command;
  const bin = resolveBin(name, name.includes("/") ? name : undefined, "AGENTPORT_ACP_BIN");
  if (!bin.ok) throw environmentError(`--acp-command: ${bin.reason}`);
  return [bin.path, ...rest, ...setup.settings.passThrough];
}

export const acpAdapter: AgentAdapter = {
  name: "acp",
  axes: { injection: "rpc", observation: "rpc-events", state: { lives: "agent-home", folders: [] }, sessionId: "learned" },
  capabilities: { resume: true, interactive: false, send: false },
  verdictReads:
    "the `session/prompt` response's `stopReason` (`end_turn` completed; `max_tokens`, `max_turn_requests`, `refusal` failed; `cancelled` after agentport's `session/cancel`); an error response: failed",
  bin: { command: "acp", env: "AGENTPORT_ACP_BIN", install: "any ACP agent: `gemini --acp`, `opencode acp`, …" },
  fake: "fake-acp",
  envSettings: [],
  settings: ACP_SETTINGS,
  readiness: { tested: TESTED.acp, credentials: acpCredentials },
  // An ACP agent takes its model from its own settings: nothing to translate.
  translate: () => ({ translated: { agent: "acp", env: {} }, words: [] }),
  run: async (ledger, setup, turn) => {
    return runAcp(ledger, {
      ...setup.common,
      ...streamOptions(setup, turn),
      argv: acpArgv(setup),
      clientVersion: VERSION,
      bin: turn.bin,
      prompt: turn.prompt,
      resume: turn.resume,
      progress: turn.progress,
      signal: turn.signal,
      askPermission: turn.askPermission,
      request: setup.request,
    });
  },
  // No probe: the ACP agent is whatever command the run names.
  previewArgv: async (setup) => ({ argv: acpArgv(setup), probed: null }),
  interactiveArgv: async () => {
    throw usageError("acp: an ACP agent has no terminal to hand a session to; resume it with agentport resume");
  },
  findSessions: () => [],
  replay: (cwd, emit, phase) => replayer("acp", cwd, emit, phase?.sessionId ?? null),
  probe: async () => [{ check: "acp", ok: true, detail: "an ACP agent is named per run (--acp-command); nothing to probe here" }],
};
