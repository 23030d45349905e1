// What an ACP agent takes: ACP v1 carries the prompt, the session and the
// permission answers; everything else is the agent's own (its command, its
// settings), so agentport refuses it rather than drop it.
import { acpMaxCostRefusal, COST_REPORTER_NAMES } from "../../core/acp/cost-reporters.ts";
import { SUPERVISED, noWrapUp, notServed, piOnly, untoldDeadline, type SettingsRow } from "../settings.ts";

const IN_COMMAND = "name it in the ACP agent's command (--acp-command 'gemini --acp -m MODEL') or its settings";

export const ACP_SETTINGS: SettingsRow = {
  ...SUPERVISED,
  ...piOnly("acp", "as the ACP agent does"),
  gateway: { refused: "the gateway is pi's model route (acp cannot choose the model)", instead: IN_COMMAND },
  model: { refused: "acp cannot choose the agent's model (ACP v1 has no stable way to)", instead: IN_COMMAND },
  tools: {
    refused: "acp has no tool allowlist (the ACP agent's tools are its own; each use it asks is answered by --permission-mode)",
    instead: "use --permission-mode",
  },
  thinking: { refused: "acp has no thinking level in ACP v1", instead: IN_COMMAND },
  "permission-mode": {
    how: "the permission bridge answers each `session/request_permission`: acceptEdits allows edit, delete, move; bypassPermissions allows all; else rejected",
  },
  permissions: {
    how: "the permission bridge answers each `session/request_permission` by the file's rules (kind, paths, title; first match wins; no match: rejected, in `refused`)",
  },
  "max-turns": { refused: "acp has no turn limit in ACP v1", instead: "bound the run with --max-tokens or --timeout" },
  "max-cost": {
    how: `only for an ACP agent known to report its cost (${COST_REPORTER_NAMES}; else usage error): enforced by the supervisor on the cost it reports (\`usage_update.cost\`), \`over_budget\`; none reported after all: a warning`,
    refuse: (s, ctx) => acpMaxCostRefusal(s.acpCommand, ctx.label),
  },
  "append-system-prompt": {
    refused: "acp has no system prompt in ACP v1",
    instead: "put it in the prompt, or in the agent's own instructions file (GEMINI.md, AGENTS.md)",
  },
  "pass-through": { how: "appended verbatim to the `--acp-command` words" },
  "tell-deadline": untoldDeadline("acp"),
  grace: noWrapUp("acp", "takes one session/prompt at a time (ACP has no message into a prompt in flight)", false),
  envelope: { how: "a fenced json block, told after the prompt" },
  nudges: { refused: "acp is not nudged (only pi and claude are)", instead: "resume the session to ask for the envelope again" },
  serve: notServed("acp"),
};
