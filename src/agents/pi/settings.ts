// What pi takes (core/pi/argv.ts builds its command line; the supervisor enforces the rest).
import { knownTools } from "../../core/translate.ts";
import { passedThrough } from "../reserved.ts";
import { SUPERVISED, notServed, noWrapUp, type SettingsRow } from "../settings.ts";

export const PI_SETTINGS: SettingsRow = {
  ...SUPERVISED,
  model: { how: "`--model <gateway>/ID` (`--direct`: as is; `--gateway G`)" },
  tools: { how: "`--tools` in pi's words (+ the envelope tool)" },
  thinking: { how: "`--thinking` (max → xhigh)" },
  "permission-mode": {
    refused: "pi has no permission modes (it is Claude Code's flag)",
    instead: `choose what pi may do with --tools (${knownTools("pi").slice(0, 7).join(", ")})`,
  },
  permissions: { refused: "pi asks no permission: its tools run as --tools allows", instead: "choose what pi may do with --tools" },
  "max-turns": { how: "enforced by agentport: `failed`, `turn_limit`", supervised: true },
  "max-cost": { how: "enforced by the supervisor on the running cost: `over_budget`" },
  "append-system-prompt": {
    how: "`--append-system-prompt` (joined, then the envelope's instructions; a pi without the flag: usage error)",
  },
  "pass-through": passedThrough(
    "pi",
    "appended verbatim; `--mode`, `--session`, `--session-dir`, `--fork`, `--no-session`, `-p`, `-c`, `-r`, `--export`, `--list-models`, `--help` refused",
  ),
  "tell-deadline": { how: 'one line in `--append-system-prompt` ("You have N minutes; save your work before then")' },
  grace: noWrapUp("pi", "is run one-shot (its prompt read to the end of stdin)"),
  timeout: { how: "every phase and every RPC turn" },
  envelope: { how: "the `report_phase` tool" },
  nudges: { how: "short resumes asking only for the envelope" },
  "session-dir": { how: "`--session-dir` (pi's session files)" },
  gateway: { how: "the model's route: `<gateway>/ID`, or as is with `--direct`" },
  "require-ext": { how: "checked against the extensions pi loaded (agentport's extension, `-e`)" },
  serve: notServed("pi"),
};
