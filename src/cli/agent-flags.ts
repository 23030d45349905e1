// The flags of the commands that run an agent (run, resume, config, bon), as
// citty declares them; src/config/resolve.ts turns them into settings.
import { CONFIG_FILE, DEFAULT_NUDGES, MAX_NUDGES } from "../config/schema.ts";
import { DEFAULT_GATEWAY, DEFAULT_TIMEOUT_S } from "../config/resolve.ts";
import { PERMISSION_MODES, THINKING_LEVELS } from "../core/translate.ts";
import { outputArgs, verbosityArgs } from "./common.ts";
import { HOME_ARG, ledgerArgs } from "./ledger-option.ts";
import { AGENT_NAMES, AGENT_TRAITS } from "../core/agents.ts";

// `--<agent>-bin` for every agent; from the names, not the adapter table (which imports these flags' users).
const BIN_ARGS = Object.fromEntries(
  AGENT_NAMES.filter((name) => AGENT_TRAITS[name].namedBinary).map((name) => [
    `${name}-bin`,
    { type: "string" as const, description: `The ${name} binary (else $AGENTPORT_${name.toUpperCase()}_BIN, else PATH)` },
  ]),
) as Record<`${(typeof AGENT_NAMES)[number]}-bin`, { type: "string"; description: string }>;

/** The roster's flags: a command that spreads these resolves its options with agentSetup (run, resume, config). */
export const rosterArgs = {
  as: { type: "string" as const, valueHint: "NAME", description: "Use this named agent of agentport.json (flags override its values)" },
  config: {
    type: "string" as const,
    valueHint: "FILE",
    description: `The project config (else $AGENTPORT_CONFIG, else the nearest ${CONFIG_FILE} from --cwd up to the repository root)`,
  },
  nudges: {
    type: "string" as const,
    valueHint: "N",
    description: `When a turn ends without its envelope, ask for it up to N times in the same session (default ${DEFAULT_NUDGES}, at most ${MAX_NUDGES}), then fail with "no envelope after N nudges"`,
  },
};

/** run and resume: the prompt as a flag, for a prompt that starts with "-". */
export const promptArgs = {
  words: {
    type: "positional" as const,
    required: false,
    description:
      'The prompt: every word, joined with single spaces; "-" or nothing reads it from stdin. After `--`: arguments for the agent, verbatim',
  },
  prompt: { type: "string" as const, valueHint: "TEXT", description: 'The prompt as one value (for a prompt that starts with "-")' },
};

export const agentArgs = {
  model: {
    type: "string" as const,
    description: "Model id (pi: turned into a route with the gateway prefix unless --direct; claude: the provider prefix is dropped)",
  },
  cwd: { type: "string" as const, description: "Folder the agent works in (default: the current folder)" },
  tools: {
    type: "string" as const,
    valueHint: "a,b",
    description:
      "Allowed tools, comma-separated, in pi's words (read, bash, edit, write, grep, find, ls) or Claude Code's (Read, WebFetch, mcp__server__tool, …); an unknown name is exit 2",
  },
  thinking: {
    type: "string" as const,
    valueHint: "LEVEL",
    description: `Thinking: ${THINKING_LEVELS.join(", ")} (pi: --thinking, max is xhigh; claude: MAX_THINKING_TOKENS)`,
  },
  "permission-mode": {
    type: "string" as const,
    valueHint: "MODE",
    description: `claude's --permission-mode: ${PERMISSION_MODES.join(", ")} (pi has none: use --tools)`,
  },
  permissions: {
    type: "string" as const,
    valueHint: "FILE",
    description:
      "A permission policy (JSON: rules on the tool kind, paths and title, first match wins, no match rejected) answering every permission the agent asks: --agent acp and opencode --serve; exit 2 for the others",
  },
  "fail-on-refusal": { type: "boolean" as const, description: "A run that completed but had requests refused fails (exit 1)" },
  "max-turns": {
    type: "string" as const,
    valueHint: "N",
    description: "At most N assistant turns (claude: --max-turns; pi: agentport ends the run, failure turn_limit)",
  },
  "max-cost": {
    type: "string" as const,
    valueHint: "USD",
    description:
      "Stop the run when its running cost passes USD (status over_budget, exit 4; claude: also --max-budget-usd; acp: only an agent that reports its cost, opencode acp or claude-agent-acp, else exit 2)",
  },
  "append-system-prompt": {
    type: "string" as const,
    valueHint: "TEXT|@FILE",
    description: "Add to the agent's system prompt (repeatable; both agents' --append-system-prompt)",
  },
  timeout: {
    type: "string" as const,
    valueHint: "S",
    description: `Stop the agent after S seconds, on the monotonic or the wall clock (default ${DEFAULT_TIMEOUT_S}, 0 for none; status timeout, exit 4)`,
  },
  stall: { type: "string" as const, valueHint: "S", description: "Stop the agent after S seconds without output (status stalled, exit 4)" },
  "tell-deadline": {
    type: "boolean" as const,
    description:
      'With --timeout: one line in the appended system prompt ("You have N minutes; save your work before then"; claude, pi and codex). Every agent with a timeout has AGENTPORT_DEADLINE (RFC 3339) in its environment',
  },
  grace: {
    type: "string" as const,
    valueHint: "S",
    description:
      'With --timeout: S seconds before it (and when an enforced --max-tokens goes over), tell the running agent "Time is nearly up: finish now, save your work and report" (opencode --serve; in bon, pi arms by RPC steer, opencode --serve arms into their sessions); the hard stop follows',
  },
  "tool-timeout": {
    type: "string" as const,
    valueHint: "S",
    description:
      "Stop the agent when one tool call stays open S seconds (status stalled, stall_kind tool, exit 4); a busy tool call (CPU, or output written) is otherwise no stall",
  },
  "max-tokens": {
    type: "string" as const,
    valueHint: "N",
    description: "Token budget: input + output + cache writes + W × cache reads (off by default)",
  },
  budget: {
    type: "string" as const,
    valueHint: "warn|enforce",
    description: "With --max-tokens: warn once, or stop after the grace (default enforce; status over_budget, exit 4)",
  },
  "cache-read-weight": { type: "string" as const, valueHint: "W", description: "Weight of cache reads in the budget (default 0.1)" },
  "budget-grace": {
    type: "string" as const,
    valueHint: "S",
    description: "Seconds over budget before enforce stops the run (default 240)",
  },
  "loop-repeat": {
    type: "string" as const,
    valueHint: "K",
    description:
      "Stop after the same tool call K times in a row, an A-B ping-pong or the same text repeated (default 5; status looping, exit 4)",
  },
  loop: { type: "string" as const, valueHint: "on|off", description: "Loop detection (default on)" },
  linger: { type: "string" as const, valueHint: "S", description: "End an agent still alive S seconds after its result (default 10)" },
  schema: {
    type: "string" as const,
    valueHint: "FILE",
    description: "Require an envelope matching this JSON Schema (pi: the report_phase tool; claude: a fenced json block)",
  },
  envelope: { type: "boolean" as const, description: "Require the default envelope {status, summary, changed_files}" },
  "require-ext": { type: "string" as const, valueHint: "a,b", description: "pi extensions that must be proven loaded (fails closed)" },
  "session-dir": { type: "string" as const, description: "pi session folder (default: <home>/pi-sessions)" },
  gateway: {
    type: "string" as const,
    description: `pi route prefix for --model (default ${DEFAULT_GATEWAY}, else $AGENTPORT_GATEWAY; "" for none)`,
  },
  direct: { type: "boolean" as const, description: "Send --model to pi as is (it already is a route)" },
  "env-file": {
    type: "string" as const,
    valueHint: "FILE",
    description:
      "Read variables for the agent from FILE (repeatable; later files win, the real environment wins over all): only credentials by name (*_API_KEY, *_TOKEN, *_SECRET, *_PASSWORD, …), the agent's own settings and --env-allow names; any other key refuses the run (exit 2)",
  },
  "env-allow": {
    type: "string" as const,
    valueHint: "NAME",
    description:
      "Let an env file set NAME, or pass agentport's own variable NAME (AGENTPORT_*, PG*) on to the agent (repeatable). Never a name that moves code loading or destinations (PATH, *_HOME, *_CONFIG*, *_URL, …)",
  },
  profile: {
    type: "string" as const,
    valueHint: "KEY,KEY",
    description: "Vault mode: the agent gets the real environment minus the env files' keys, plus only these",
  },
  ...BIN_ARGS,
  "keep-stream": {
    type: "string" as const,
    valueHint: "on|off",
    description: "Keep the agent's stdout in the run folder's stream.jsonl, for replay (default on)",
  },
  serve: {
    type: "boolean" as const,
    description:
      "opencode: run it as `opencode serve` and speak HTTP / SSE to it (permission requests answered by --permission-mode; retries visible)",
  },
  "expect-change": {
    type: "boolean" as const,
    description:
      "The run must leave a change in its folder (tracked or untracked, not ignored files): a completed run that changed nothing fails (no_change, exit 1)",
  },
  "expect-file": {
    type: "string" as const,
    valueHint: "PATH",
    description: "The run must write PATH (relative to --cwd; repeatable): a completed run that did not fails (missing_file, exit 1)",
  },
  isolate: {
    type: "boolean" as const,
    description:
      "Run the agent under bwrap: the file system read-only but its folder, its own state folders and a private /tmp; every process it starts ends with it. Isolated, claude, codex, gemini and opencode default to --permission-mode bypassPermissions (the sandbox is the boundary). Where bwrap cannot work: one line, exit 5",
  },
  network: {
    type: "string" as const,
    valueHint: "host|none",
    description: "With --isolate: the host's network (default), or none (a network namespace of its own)",
  },
  "acp-command": {
    type: "string" as const,
    valueHint: "CMD",
    description:
      "--agent acp: the ACP agent to drive, as words ('gemini --acp', 'opencode acp'); agentport speaks ACP to it on stdin/stdout",
  },
  "keep-prompt": {
    type: "boolean" as const,
    description: "Keep the prompt in the run folder's prompt.txt (else only its sha256 and size in argv.json)",
  },
  home: HOME_ARG,
  ...ledgerArgs,
  ...outputArgs,
  ...verbosityArgs,
};
