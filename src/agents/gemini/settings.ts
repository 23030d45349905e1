// What gemini takes (argv.ts builds its command line).
import { passedThrough } from "../reserved.ts";
import { SUPERVISED, notServed, untoldDeadline, piOnly, pricedCost, noWrapUp, type SettingsRow } from "../settings.ts";

export const GEMINI_SETTINGS: SettingsRow = {
  ...SUPERVISED,
  ...piOnly("gemini", "under ~/.gemini"),
  model: { how: "`-m` without the provider prefix (none: gemini-2.5-flash, never `auto`)" },
  tools: { how: "`--allowed-tools` in gemini's words" },
  thinking: { refused: "gemini takes no thinking level on its command line", instead: "set thinkingConfig in gemini's settings.json" },
  "permission-mode": { how: "`--approval-mode` (acceptEdits: auto_edit; plan; bypassPermissions: yolo; else default)" },
  permissions: {
    refused: "gemini's one-shot mode answers no permission request (only its approval modes and --allowed-tools)",
    instead: "use --permission-mode and --tools, or run it over ACP: --agent acp --acp-command 'gemini --acp'",
  },
  "max-turns": {
    refused: "gemini has no turn limit on its command line (model.maxSessionTurns is in its settings.json)",
    instead: "bound the run with --max-tokens or --timeout",
  },
  "max-cost": pricedCost("gemini"),
  "append-system-prompt": {
    refused: "gemini cannot append to its system prompt (GEMINI_SYSTEM_MD replaces it whole)",
    instead: "put it in GEMINI.md in the working folder, or in the prompt",
  },
  "pass-through": passedThrough("gemini", "appended verbatim; `-o`, `--session-id`, `--resume`, `-p`, `-i`, `--acp` refused"),
  "tell-deadline": untoldDeadline("gemini"),
  grace: noWrapUp("gemini", "is run one-shot (its prompt read to the end of stdin)", false),
  envelope: { how: "a fenced json block, told after the prompt on stdin" },
  nudges: { refused: "gemini is not nudged (only pi and claude are)", instead: "resume the session to ask for the envelope again" },
  serve: notServed("gemini"),
};
