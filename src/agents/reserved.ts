// Pass-through flags (after `--`) that would break agentport's own contract
// with an agent: the output it reads, the session it named, the prompt on
// stdin. Refused with one line before anything starts. Pure.

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

/** The first pass-through argument that would break the contract, with why; null when none does. */
export function reservedPassThrough(agent: "pi" | "claude", args: readonly string[]): { arg: string; why: string } | null {
  const table = agent === "pi" ? PI_RESERVED : CLAUDE_RESERVED;
  for (const arg of args) {
    const flag = arg.startsWith("--") ? (arg.split("=")[0] ?? arg) : arg;
    const why = Object.hasOwn(table, flag) ? table[flag] : undefined;
    if (why !== undefined) return { arg: flag, why };
  }
  return null;
}
