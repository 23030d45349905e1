// What Claude Code takes (claude.ts builds its command line).
import { passedThrough } from "../reserved.ts";
import { SUPERVISED, notServed, piOnly, noWrapUp, type SettingsRow } from "../settings.ts";

export const CLAUDE_SETTINGS: SettingsRow = {
  ...SUPERVISED,
  ...piOnly("claude", "under ~/.claude/projects"),
  model: { how: "`--model` without the provider prefix" },
  tools: { how: "`--allowedTools=A,B` in Claude Code's words" },
  thinking: { how: "`MAX_THINKING_TOKENS`" },
  "permission-mode": { how: "`--permission-mode=M` (default, acceptEdits, plan, bypassPermissions, dontAsk)" },
  permissions: {
    refused: "claude cannot apply a first-match policy (its rules are deny-first, and its read tools ask no permission)",
    instead: "use --tools and --permission-mode, or drive claude over ACP (--agent acp --acp-command claude-agent-acp)",
  },
  "max-turns": { how: "`--max-turns=N` (claude's stop: `turn_limit`)" },
  "max-cost": { how: "`--max-budget-usd=USD`, and the supervisor: `over_budget`" },
  "append-system-prompt": { how: "`--append-system-prompt=` (joined, then the envelope's instructions)" },
  "pass-through": passedThrough(
    "claude",
    "appended verbatim; `-p`, `--output-format`, `--input-format`, `--verbose`, `--session-id`, `--resume`, `--continue`, `--fork-session`, `--no-session-persistence`, `--replay-user-messages`, `--include-partial-messages` refused",
  ),
  "tell-deadline": { how: 'one line in `--append-system-prompt=` ("You have N minutes; save your work before then")' },
  grace: noWrapUp("claude", "is run one-shot (its prompt read to the end of stdin)"),
  envelope: { how: "a fenced json block, told in the appended system prompt" },
  nudges: { how: "short resumes asking only for the envelope" },
  serve: notServed("claude"),
};
