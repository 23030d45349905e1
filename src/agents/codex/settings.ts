// What codex exec takes (argv.ts builds its command line).
import { passedThrough } from "../reserved.ts";
import { SUPERVISED, notServed, piOnly, pricedCost, noWrapUp, type SettingsRow } from "../settings.ts";

export const CODEX_SETTINGS: SettingsRow = {
  ...SUPERVISED,
  ...piOnly("codex", "under $CODEX_HOME/sessions"),
  model: { how: "`-m` without the provider prefix" },
  tools: { refused: "codex has no tool allowlist", instead: "bound it with --permission-mode (codex's sandbox)" },
  thinking: { how: '`-c model_reasoning_effort="E"` (off → minimal, xhigh and max → high)' },
  "permission-mode": { how: "`--sandbox` (read-only; acceptEdits: workspace-write; bypassPermissions: danger-full-access)" },
  permissions: {
    refused: "codex exec answers no permission request (only its sandbox modes)",
    instead: "use --permission-mode (codex's --sandbox)",
  },
  "max-turns": {
    refused: "codex has no turn limit (its events count no turns for agentport)",
    instead: "bound the run with --max-tokens or --timeout",
  },
  "max-cost": pricedCost("codex"),
  "append-system-prompt": { how: '`-c developer_instructions="…"` (joined)' },
  "pass-through": passedThrough("codex", "before `resume ID -`, verbatim; `--json`, `--ephemeral`, `-C`, `--output-schema` refused"),
  "tell-deadline": { how: 'one line in `developer_instructions` ("You have N minutes; save your work before then")' },
  grace: noWrapUp("codex", "is run one-shot (its prompt read to the end of stdin)"),
  envelope: { how: "`--output-schema FILE` (codex asks the model; agentport checks the final text)" },
  nudges: { refused: "codex is not nudged (only pi and claude are)", instead: "resume the session to ask for the envelope again" },
  serve: notServed("codex"),
};
