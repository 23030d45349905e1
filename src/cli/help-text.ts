// What each command's help shows past its options: examples, and the exit
// codes it can return (README "Exit codes"). Example prompts stay short so a
// line fits 80 columns once wrapped.

export interface HelpText {
  examples: string[];
  /** Arguments after `--` go to the agent. */
  passThrough?: boolean;
}

export const HELP_TEXT: Record<string, HelpText> = {
  agentport: {
    examples: [
      "agentport selftest",
      "agentport doctor",
      'agentport run --agent claude "Fix the failing test in src/date.ts"',
      "agentport sessions --here",
      'agentport run -c "Now add the tests"',
    ],
  },
  run: {
    passThrough: true,
    examples: [
      'agentport run --agent claude --tools Read,Grep --timeout 600 "Explain src/main.ts"',
      'agentport run --agent pi --model anthropic/claude-sonnet-4 --direct --envelope "Add a --dry-run flag"',
      'echo "Add a --dry-run flag" | agentport run --agent claude --json - > verdict.json',
      'agentport run --as builder --envelope --nudges 2 "Add a --dry-run flag"',
      'agentport run --agent claude --permission-mode acceptEdits --max-turns 8 --max-cost 0.50 "Fix it"',
      'agentport run --agent claude --append-system-prompt @house-rules.md "Fix it" -- --add-dir ../lib',
      "agentport run --agent acp --acp-command 'gemini --acp' --permission-mode acceptEdits \"Fix it\"",
      "agentport run --agent pi --prompt '-v is not a flag here: explain it'",
      'agentport run -c "Now add the tests"',
    ],
  },
  resume: {
    passThrough: true,
    examples: [
      'agentport resume 0193a1b2 "Now add the tests"',
      'agentport resume --last "Now add the tests"',
      "agentport resume 0193a1b2 --json - < next-prompt.txt",
      "agentport resume 0193a1b2 --interactive",
    ],
  },
  sessions: {
    examples: [
      "agentport sessions",
      "agentport sessions --here --status failed --since 2d",
      "agentport sessions --limit 20 --offset 20",
      "agentport sessions --agent pi --json > sessions.ndjson",
    ],
  },
  show: { examples: ["agentport show 0193a1b2", "agentport show 0193a1b2 --json"] },
  replay: {
    examples: [
      "agentport replay --agent claude stream.jsonl --json",
      "claude -p --output-format stream-json --verbose hi | agentport replay -",
      "agentport replay 0193a1b2",
    ],
  },
  selftest: { examples: ["agentport selftest", "agentport selftest --json"] },
  doctor: {
    examples: [
      "agentport doctor",
      'agentport doctor --agent claude && agentport run --agent claude "Fix it"',
      "agentport doctor --json --pi-bin ./node_modules/.bin/pi",
    ],
  },
  config: { examples: ["agentport config", "agentport config --as builder --agent claude --json"] },
  trust: { examples: ["agentport trust", "agentport trust path/to/agentport.json --json"] },
  import: {
    examples: ["agentport sessions --json > box1.ndjson && agentport import box1.ndjson", "cat box*.ndjson | agentport import - --json"],
  },
  ledger: {
    examples: [
      "agentport ledger copy --to postgres://agentport@db.internal/agentport",
      "agentport ledger copy --ledger sqlite:/old/ledger.sqlite --to sqlite:/new/ledger.sqlite --json",
    ],
  },
  follow: { examples: ["agentport follow 0193a1b2", "agentport follow 0193a1b2 --json | jq -c 'select(.kind == \"tool_started\")'"] },
  cancel: {
    examples: [
      "agentport cancel 0193a1b2",
      "agentport cancel 0193a1b2 --json",
      "agentport cancel 5f0c2a9e-1b7d-4c35-9a0e-2f4d6a1c8b90   # a fleet task",
    ],
  },
  prices: { examples: ["agentport prices", "agentport prices anthropic/claude-sonnet-4 --json"] },
  schema: { examples: ["agentport schema", "agentport schema verdict > verdict.schema.json"] },
  prune: { examples: ["agentport prune --older-than 30d", "agentport prune --older-than 12h --dry-run --json"] },
  bon: {
    passThrough: false,
    examples: [
      "agentport bon --demo",
      'agentport bon specs/bon-demo.md --arms 3 --model anthropic/claude-sonnet-4 --direct --gate "bun test"',
      'agentport bon specs/x.md --models a/m1,b/m2 --parallel --jobs 2 --gate "npm test" --json > harvest.json',
      "agentport bon --dry-run",
    ],
  },
  completion: {
    examples: [
      "agentport completion bash > /etc/bash_completion.d/agentport",
      'agentport completion zsh > "${fpath[1]}/_agentport"',
      "agentport completion fish > ~/.config/fish/completions/agentport.fish",
    ],
  },
  help: { examples: ["agentport help run"] },
  acp: {
    passThrough: true,
    examples: [
      "agentport acp --agent claude --timeout 900",
      "agentport acp --agent acp --acp-command 'gemini --acp' --permission-mode acceptEdits",
    ],
  },
  submit: {
    examples: [
      'agentport submit --ledger postgres://agentport@db/fleet --repo https://git.example/app.git --ref main --agent claude "Fix the flaky test"',
      'agentport submit --repo file:///srv/app.git --key nightly-2026-12-01 --retries 1 --json "Update the changelog"',
      'agentport submit --repo file:///srv/app.git --requires gpu "Train it"',
      'agentport submit --resume 5f0c2a9e-… "Now add the tests"',
      'agentport submit --repo file:///srv/app.git --arms 3 --models sonnet,opus --gate "npm test" "Fix the flaky test"',
    ],
  },
  worker: {
    examples: [
      "AGENTPORT_LEDGER=postgres://agentport@db/fleet agentport worker --concurrency 2",
      "agentport worker --agents claude --label gpu --label region=eu",
      "agentport worker --once",
    ],
  },
  tasks: { examples: ["agentport tasks", "agentport tasks --json | jq -c 'select(.state == \"interrupted\")'"] },
  task: { examples: ["agentport task 5f0c2a9e-…", "agentport task 5f0c2a9e-… --json"] },
  wait: {
    examples: [
      "agentport wait \"$(agentport submit --repo file:///srv/app.git 'Fix it')\" --timeout 3600",
      "agentport wait \"$(agentport submit --repo file:///srv/app.git --arms 3 --gate 'npm test' 'Fix it')\" --json | jq .winner",
    ],
  },
  results: {
    examples: [
      "agentport results",
      "agentport results 5f0c2a9e-… --json | jq .verdict.status",
      "agentport results 9b1d7c3a-… # a group: its ranking",
    ],
  },
  queue: {
    examples: [
      "agentport queue set nightly --budget-usd 25 --per day",
      'agentport submit --queue nightly --repo file:///srv/app.git "Fix it"',
      "agentport queue --json",
    ],
  },
  workers: { examples: ["agentport workers", "agentport workers --json | jq -r .hostname"] },
};

type Codes = [number, string][];

const RUN: Codes = [
  [0, "ok: the run completed"],
  [1, "the agent's run failed (provider error, protocol violation, no result, a missing or invalid envelope)"],
  [2, "usage or input error (unknown option, bad value, empty prompt, unreadable file)"],
  [3, "refused before calling the agent: zero tokens"],
  [4, "stopped by supervision (timeout, stall, budget, loop)"],
  [5, "environment fault (agent not found, auth, quota, network, the ledger)"],
  [75, "parked: a usage limit that resets later; resume --when-ready ID waits for it"],
  [130, "interrupted (Ctrl-C)"],
];
const READ: Codes = [
  [0, "ok"],
  [2, "usage or input error (unknown option or session, bad value)"],
  [5, "environment fault (the ledger unreachable or damaged)"],
];

/** The exit codes `name` can return. */
export function exitCodesOf(name: string): Codes {
  switch (name) {
    case "agentport":
    case "run":
    case "resume":
      return RUN;
    case "bon":
      return [
        [0, "a green winner (applied with --apply)"],
        [1, "no arm green, or the apply failed"],
        ...RUN.slice(2, 6),
        [6, "your checkout changed during the batch (or could not be read after it)"],
        ...RUN.slice(6),
      ];
    case "replay":
      return [
        [0, "the replayed run completed"],
        [1, "it failed"],
        [2, "usage or input error (an unreadable file)"],
        [4, "it was stopped by supervision"],
        [5, "it ended on an environment fault"],
      ];
    case "wait":
      return [
        [0, "every task's run completed; a group (submit --arms): an arm is green"],
        [1, "a group: no arm is green (else the worst task's exit code, as run returns it)"],
        [2, "usage or input error (an unknown task or group)"],
        [4, "--timeout passed before every task (every arm) was final"],
        [5, "environment fault (the ledger unreachable or damaged)"],
      ];
    case "results":
      return [
        [0, "ok; a group (submit --arms): an arm is green"],
        [1, "a group: no arm is green"],
        [2, "usage or input error (an unknown task, one not final, a group with an arm not reported)"],
        [5, "environment fault (the ledger unreachable or damaged)"],
      ];
    case "follow":
      return [[0, "the phase completed"], [1, "it failed (else the phase's own exit code, as run returns it)"], ...READ.slice(1)];
    case "acp":
      return [
        [0, "the client closed its stdin (every prompt's verdict was answered over ACP)"],
        [2, "usage or input error (a bad flag: nothing was spoken)"],
        [5, "environment fault (the agent not found, the ledger)"],
        [130, "interrupted (Ctrl-C): running prompts cancelled"],
      ];
    case "doctor":
      return [
        [0, "a run can start here (with --agent X: X can)"],
        [2, "usage error"],
        [5, "no agent can start a run (or not X), or the ledger or state folder is unusable"],
      ];
    case "selftest":
      return [
        [0, "every check passed"],
        [1, "a check failed"],
        [2, "usage error"],
      ];
    case "completion":
    case "help":
      return [
        [0, "ok"],
        [2, "unknown shell or command"],
      ];
    default:
      return READ;
  }
}
