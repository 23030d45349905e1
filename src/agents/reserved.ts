// Pass-through arguments (after `--`) that would break agentport's own contract
// with an agent: the output it reads, the session it named, the prompt on
// stdin. Refused with one line before anything starts. Pure.
import type { AgentName } from "../core/agents.ts";
import type { Expression } from "./settings.ts";

/** claude: the stream-json output (with --verbose), the session id agentport chose, the prompt on stdin. */
export const CLAUDE_RESERVED: Readonly<Record<string, string>> = {
  "-p": "agentport runs claude with -p already",
  "--print": "agentport runs claude with -p already",
  "--output-format": "agentport reads claude's stream-json output",
  "--input-format": "agentport gives the prompt as text on stdin",
  "--verbose": "agentport passes --verbose (stream-json needs it)",
  "--session-id": "agentport names the session (see agentport resume)",
  "--resume": "use agentport resume ID",
  "-r": "use agentport resume ID",
  "--continue": "use agentport resume ID",
  "-c": "use agentport resume ID",
  "--fork-session": "agentport's session must keep the id it declared",
  "--no-session-persistence": "agentport's sessions must stay resumable",
  "--replay-user-messages": "it needs stream-json input",
  "--include-partial-messages": "agentport reads whole records",
};

/** pi: json mode, the session file or id agentport named, the prompt on stdin. */
export const PI_RESERVED: Readonly<Record<string, string>> = {
  "--mode": "agentport runs pi with --mode json (or rpc)",
  "-p": "agentport gives the prompt on stdin",
  "--print": "agentport gives the prompt on stdin",
  "--session": "agentport names the session file (see agentport resume)",
  "--session-id": "agentport names the session (see agentport resume)",
  "--session-dir": "use agentport's --session-dir",
  "--no-session": "agentport's sessions must stay resumable",
  "--fork": "agentport names the session",
  "--continue": "use agentport resume ID",
  "-c": "use agentport resume ID",
  "--resume": "use agentport resume ID",
  "-r": "use agentport resume ID",
  "--export": "it exits without running",
  "--list-models": "it exits without running",
  "--help": "it exits without running",
  "-h": "it exits without running",
  "--version": "it exits without running",
  "-v": "it exits without running",
  "--": "pi 0.73.1 rejects it",
};

const EXITS = "it exits without running";

/** codex exec: the --json events, the session kept, the folder, the schema agentport checks. */
export const CODEX_RESERVED: Readonly<Record<string, string>> = {
  "--json": "agentport runs codex exec --json and reads its events",
  "--ephemeral": "agentport's sessions must stay resumable",
  "-C": "agentport runs codex in --cwd",
  "--cd": "agentport runs codex in --cwd",
  "--output-schema": "use agentport's --schema",
  "--help": EXITS,
  "-h": EXITS,
  "--version": EXITS,
  "-V": EXITS,
};

/** gemini: stream-json output, the session id agentport chose, the prompt on stdin, headless. */
export const GEMINI_RESERVED: Readonly<Record<string, string>> = {
  "-o": "agentport reads gemini's stream-json output",
  "--output-format": "agentport reads gemini's stream-json output",
  "--session-id": "agentport names the session (see agentport resume)",
  "--session-file": "agentport names the session (see agentport resume)",
  "-r": "use agentport resume ID",
  "--resume": "use agentport resume ID",
  "-p": "agentport gives the prompt on stdin",
  "--prompt": "agentport gives the prompt on stdin",
  "-i": "agentport runs gemini headless",
  "--prompt-interactive": "agentport runs gemini headless",
  "--acp": "agentport reads stream-json, not ACP",
  "--experimental-acp": "agentport reads stream-json, not ACP",
  "--list-sessions": EXITS,
  "--delete-session": EXITS,
  "-l": EXITS,
  "--list-extensions": EXITS,
  "--help": EXITS,
  "-h": EXITS,
  "--version": EXITS,
  "-v": EXITS,
};

/** opencode run: its json events, the session agentport bound, the process agentport starts, the folder. */
export const OPENCODE_RESERVED: Readonly<Record<string, string>> = {
  "--format": "agentport reads opencode's json events",
  "-s": "use agentport resume ID",
  "--session": "use agentport resume ID",
  "-c": "use agentport resume ID",
  "--continue": "use agentport resume ID",
  "--fork": "agentport's session must keep the id it bound",
  "--attach": "agentport starts opencode itself (see --serve)",
  "-i": "agentport runs opencode headless",
  "--interactive": "agentport runs opencode headless",
  "--dir": "agentport runs opencode in --cwd",
  "--help": EXITS,
  "-h": EXITS,
  "--version": EXITS,
  "-v": EXITS,
};

// acp: the agent is any command and ACP is spoken on its stdin/stdout whatever its flags, so none is reserved.
const RESERVED: Readonly<Record<AgentName, Readonly<Record<string, string>>>> = {
  pi: PI_RESERVED,
  claude: CLAUDE_RESERVED,
  codex: CODEX_RESERVED,
  gemini: GEMINI_RESERVED,
  opencode: OPENCODE_RESERVED,
  acp: {},
};

/** The first pass-through argument that would break the contract, with why; null when none does. */
export function reservedPassThrough(agent: AgentName, args: readonly string[]): { arg: string; why: string } | null {
  const table = RESERVED[agent];
  for (const arg of args) {
    const flag = arg.startsWith("--") ? (arg.split("=")[0] ?? arg) : arg;
    const why = Object.hasOwn(table, flag) ? table[flag] : undefined;
    if (why !== undefined) return { arg: flag, why };
  }
  return null;
}

/** The refusal of a pass-through that breaks the contract, as one line; null when none does. */
export function reservedLine(agent: AgentName, args: readonly string[]): string | null {
  const reserved = reservedPassThrough(agent, args);
  return reserved === null ? null : `-- ${reserved.arg}: not passed to ${agent}: ${reserved.why}`;
}

/** The pass-through row of an agent whose CLI takes extra arguments: appended verbatim, the reserved ones refused. */
export const passedThrough = (agent: AgentName, how: string): Expression => ({ how, refuse: (s) => reservedLine(agent, s.passThrough) });
