// The seed's axes as the commands read them (adapter.ts declares them per
// row): the axes of this run (`--serve` has its own), what --isolate keeps
// writable, what resume refuses before anything starts, and the words
// `config` and `--verbose` say them in.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AgentName } from "../core/agents.ts";
import type { Env } from "../core/env.ts";
import type { AgentAdapter, Axes } from "./adapter.ts";

/** The axes of a run of this row: its served mode's under `--serve`, where it has one. */
export const axesOf = (row: Pick<AgentAdapter, "axes" | "served">, serve: boolean): Axes =>
  serve && row.served !== undefined ? row.served : row.axes;

const WORDS = {
  injection: { stdin: "stdin, closed", rpc: "a JSON-RPC request", http: "HTTP POST" },
  observation: { "stream-end": "the stream's end", "rpc-events": "the JSON-RPC answer", sse: "the server's SSE events" },
  lives: {
    "local-jsonl": "a JSONL file in agentport's session folder",
    "agent-project-folder": "the agent's per-project folder",
    "agent-home": "the agent's home",
    remote: "the server's database",
  },
  sessionId: { chosen: "chosen by agentport", "named-file": "its file named by agentport", learned: "learned from the agent" },
} as const;

/** The axes in words, for `config` and `--verbose`. */
export function axesLine(axes: Axes): string {
  return `prompt in: ${WORDS.injection[axes.injection]}; end seen: ${WORDS.observation[axes.observation]}; session in: ${WORDS.lives[axes.state.lives]}, ${WORDS.sessionId[axes.sessionId]}`;
}

/** The axes as `config --json` shows them. */
export const shownAxes = (axes: Axes) => ({
  injection: axes.injection,
  observation: axes.observation,
  state: axes.state.lives,
  session_id: axes.sessionId,
});

/** One state folder entry as a path: the first alternative whose variable is set (`~` is $HOME); null when none applies. */
export function statePath(entry: string, env: Env): string | null {
  for (const alt of entry.split("|")) {
    const m = /^(?:\$([A-Z_]+)|~)(.*)$/.exec(alt);
    if (m === null) continue;
    const base = m[1] === undefined ? env.HOME : env[m[1]];
    if (base) return join(base, m[2] ?? "");
  }
  return null;
}

/** The folders the agent writes its session state in, kept writable under --isolate: the row's, and agentport's session folder when the session lives there. */
export function stateFolders(axes: Axes, env: Env, sessionDir: string | undefined): string[] {
  const folders = axes.state.folders.map((e) => statePath(e, env)).filter((p): p is string => p !== null);
  return axes.state.lives === "local-jsonl" && sessionDir !== undefined ? [...folders, sessionDir] : folders;
}

/** Why a session cannot be continued, from who names it (one line), before any process starts; null when it can. */
export function resumeRefusal(
  agent: AgentName,
  axes: Axes,
  session: { id: string; agent_session_id: string | null; session_file: string | null },
): string | null {
  switch (axes.sessionId) {
    case "named-file":
      return session.session_file !== null && !existsSync(session.session_file)
        ? `session ${session.id}: its ${agent} session file ${session.session_file} is gone`
        : null;
    case "learned":
      return session.agent_session_id === null
        ? `session ${session.id}: ${agent} never named its session (its first phase ended before it did), so there is nothing to resume`
        : null;
    case "chosen":
      return null;
  }
}
