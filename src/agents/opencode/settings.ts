// What opencode takes, one-shot (`opencode run`, argv.ts) and served (`--serve`, serve.ts).
import { reservedLine } from "../reserved.ts";
import { SUPERVISED, piOnly, untoldDeadline, type SettingsRow } from "../settings.ts";

export const OPENCODE_SETTINGS: SettingsRow = {
  ...SUPERVISED,
  ...piOnly("opencode", "in its own database"),
  model: { how: "`-m provider/model` as is (`--serve`: in the prompt)" },
  tools: {
    refused: "opencode has no tool allowlist (its permission rules bound it)",
    instead: "use --permission-mode, or `permission` in opencode.json",
  },
  thinking: {
    how: "`--variant L` (off → minimal, xhigh → max); `--serve`: usage error",
    refuse: (s, ctx) =>
      s.serve ? `${ctx.label}: opencode --serve takes no thinking level; run opencode one-shot (without --serve) for --variant` : null,
  },
  "permission-mode": {
    how: "bypassPermissions: `--auto`; plan: `--agent plan` (`--serve`: every ask rejected); acceptEdits: `--serve` only (agentport allows the edits it asks); else opencode's rules (an ask is rejected)",
    refuse: (s, ctx) =>
      s.permissionMode === "acceptEdits" && !s.serve
        ? `${ctx.label}: opencode run cannot allow edits alone (it rejects every ask); use --serve (agentport answers its asks) or bypassPermissions`
        : null,
  },
  permissions: {
    how: "`--serve` only: each permission opencode asks is answered by the file's rules (its `permission` as the kind, its file as the path, the command or pattern as the title)",
    refuse: (s, ctx) =>
      s.serve
        ? null
        : `${ctx.label}: opencode run rejects every ask itself, so no rule can allow one; use --serve (agentport answers its asks), or --agent acp --acp-command 'opencode acp'`,
  },
  "max-turns": {
    refused: "opencode run has no turn limit (an agent's `steps` in opencode.json has)",
    instead: "bound the run with --max-tokens, --max-cost or --timeout",
  },
  "max-cost": { how: "enforced by the supervisor on opencode's running cost: `over_budget`" },
  "append-system-prompt": {
    refused: "opencode has no system-prompt flag",
    instead: "put it in AGENTS.md, or in an agent of opencode.json (-- --agent NAME)",
  },
  "tell-deadline": untoldDeadline("opencode"),
  grace: {
    how: "`--serve` only: posted into the busy session (`prompt_async`), taken at the agent's next step",
    refuse: (s, ctx) =>
      s.serve
        ? null
        : `${ctx.label}: opencode run is one-shot (its prompt read to the end of stdin) and takes no message while it runs; use --serve`,
  },
  "pass-through": {
    how: "appended verbatim to `opencode run`; `--format`, `--session`, `--continue`, `--fork`, `--attach`, `--dir` refused; `--serve`: usage error",
    refuse: (s) =>
      s.serve
        ? "-- ARGS: not passed to opencode --serve (the prompt goes over HTTP); put opencode's options in opencode.json"
        : reservedLine("opencode", s.passThrough),
  },
  envelope: { how: "a fenced json block, told after the prompt" },
  nudges: { refused: "opencode is not nudged (only pi and claude are)", instead: "resume the session to ask for the envelope again" },
  serve: { how: "`opencode serve`: HTTP and its event stream" },
};
