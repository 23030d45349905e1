// Claude Code in the adapter table: `claude -p --output-format stream-json
// --verbose`, the session id chosen here, the verdict from the result record.
import { claudeCredentials, TESTED } from "../../core/readiness.ts";
import { agentExtras, runnerOptions } from "../setup.ts";
import { replayer } from "../../core/replayer.ts";
import { claudeModel, translate } from "../../core/translate.ts";
import { CLAUDE_SETTINGS } from "./settings.ts";
import { SESSION_PLACEHOLDER, type AgentAdapter } from "../adapter.ts";
import { claudeArgv, claudeInteractiveArgv } from "./argv.ts";
import { claudeSystemPrompt, runClaude } from "./run.ts";
import { versionLine } from "../cli-probe.ts";
import { claudeConfigDir, findClaudeSession } from "./origin.ts";

export const claudeAdapter: AgentAdapter = {
  name: "claude",
  axes: {
    injection: "stdin",
    observation: "stream-end",
    state: { lives: "agent-project-folder", folders: ["$CLAUDE_CONFIG_DIR|~/.claude", "~/.claude.json"] },
    sessionId: "chosen",
  },
  capabilities: { resume: true, interactive: true, send: false },
  verdictReads: "the `result` record: `is_error`, `subtype`, `result`, `total_cost_usd`, `permission_denials`",
  bin: { command: "claude", env: "AGENTPORT_CLAUDE_BIN", install: "npm install -g @anthropic-ai/claude-code" },
  fake: "fake-claude",
  envSettings: [
    "ANTHROPIC_MODEL",
    "ANTHROPIC_SMALL_FAST_MODEL",
    "MAX_THINKING_TOKENS",
    "CLAUDE_CODE_MAX_OUTPUT_TOKENS",
    "BASH_DEFAULT_TIMEOUT_MS",
    "BASH_MAX_TIMEOUT_MS",
    "MCP_TIMEOUT",
    "DISABLE_TELEMETRY",
    "DISABLE_AUTOUPDATER",
    "DISABLE_ERROR_REPORTING",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
  ],
  settings: CLAUDE_SETTINGS,
  readiness: { tested: TESTED.claude, credentials: claudeCredentials },
  bon: { armsFrom: "fork" },
  translate: (words) => {
    const t = translate("claude", words);
    const told = [
      ...(t.model ? [`--model ${t.model}`] : []),
      ...(t.tools ? [`--allowedTools ${t.tools.join(",")}`] : []),
      ...Object.entries(t.env).map(([k, v]) => `${k}=${v}`),
    ];
    return { translated: t, words: told };
  },
  run: (ledger, setup, turn) =>
    runClaude(ledger, {
      ...setup.common,
      bin: turn.bin,
      prompt: turn.prompt,
      model: setup.model ?? turn.resume?.model ?? undefined,
      tools: setup.tools,
      thinking: setup.thinking,
      schema: setup.schema,
      nudges: setup.nudges,
      ...runnerOptions(setup),
      newSessionId: turn.sessionId,
      resumeId: turn.resume === undefined ? undefined : (turn.resume.agent_session_id ?? turn.resume.id),
      forkOf: turn.fork === undefined ? undefined : (turn.fork.agent_session_id ?? turn.fork.id),
      progress: turn.progress,
      signal: turn.signal,
    }),
  // claude is not probed: its argv needs no capability.
  previewArgv: async (setup, bin) => {
    const t = translate("claude", { model: setup.model, tools: setup.tools, thinking: setup.thinking });
    const appendSystemPrompt = claudeSystemPrompt(setup.appendSystemPrompt, setup.schema);
    return {
      argv: claudeArgv({ ...agentExtras(setup), bin, sessionId: SESSION_PLACEHOLDER, model: t.model, tools: t.tools, appendSystemPrompt }),
      probed: null,
    };
  },
  interactiveArgv: async (session, bin) =>
    claudeInteractiveArgv({
      bin,
      sessionId: session.agent_session_id ?? session.id,
      model: session.model ? claudeModel(session.model) : undefined,
    }),
  findSessions: (idOrPrefix) => findClaudeSession(claudeConfigDir(), idOrPrefix),
  replay: (cwd, emit) => replayer("claude", cwd, emit),
  probe: async (bin) => {
    const version = await versionLine(bin).catch((e: Error) => `error: ${e.message}`);
    const ok = /\d+\.\d+\.\d+/.test(version);
    return [
      {
        check: "claude",
        ok,
        version: ok ? version : undefined,
        detail: `${bin}: ${version}`,
        fix: ok ? undefined : "run `claude --version` by hand",
      },
    ];
  },
};
