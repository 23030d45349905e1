// A captured stream reduced and judged with no process: each agent's reducer,
// and the verdict once the stream has ended (no exit code, no signal, no
// stderr). `agentport replay FILE` and the library's `reduce` and `replay`.
import { AcpClient } from "./acp/reducer.ts";
import type { AgentName } from "./agents.ts";
import { ClaudeReducer } from "./claude/reducer.ts";
import { CodexReducer } from "./codex/reducer.ts";
import { envelopeFromTool } from "./envelope.ts";
import { GeminiReducer } from "./gemini/reducer.ts";
import { judge } from "./judge.ts";
import { OpencodeReplayReducer } from "./opencode/replay.ts";
import { NO_PROCESS } from "./outcome.ts";
import { ENVELOPE_TOOL, PiReducer } from "./pi/reducer.ts";
import type { ProgressSink } from "./progress.ts";
import type { Reducer } from "./reduction.ts";
import type { Verdict } from "./verdict.ts";

export interface Replayer {
  reducer: Reducer;
  /** The verdict once the stream has ended. */
  verdict(): Verdict;
}

/** `cwd`: tool paths are shown relative to it ("" for as they are). */
export function replayer(agent: AgentName, cwd: string, emit?: ProgressSink, sessionId: string | null = null): Replayer {
  switch (agent) {
    case "acp": {
      // The stream holds the agent's side only: replayed as it was read, with nothing written back.
      const client = new AcpClient({ cwd, prompt: "", emit });
      client.start(() => {});
      return { reducer: client, verdict: () => judge({ agent, sessionId, reduction: client.reduction(), proc: NO_PROCESS }).verdict };
    }
    case "claude": {
      const reducer = new ClaudeReducer({ cwd, emit });
      return { reducer, verdict: () => judge({ agent, reduction: reducer.reduction(), proc: NO_PROCESS }).verdict };
    }
    case "codex": {
      const reducer = new CodexReducer({ cwd, emit, previous: null });
      return { reducer, verdict: () => judge({ agent, reduction: reducer.reduction(), proc: NO_PROCESS }).verdict };
    }
    case "gemini": {
      const reducer = new GeminiReducer({ cwd, emit });
      return { reducer, verdict: () => judge({ agent, reduction: reducer.reduction(), proc: NO_PROCESS }).verdict };
    }
    case "opencode": {
      // A `--serve` run keeps serve events in its stream.jsonl: the first record says which.
      const reducer = new OpencodeReplayReducer({ cwd, emit });
      const reduction = () => {
        const read = reducer.reduction();
        return reducer.serve ? { ...read, summary: { ...read.summary, serve: true } } : read;
      };
      return { reducer, verdict: () => judge({ agent, reduction: reduction(), proc: NO_PROCESS }).verdict };
    }
    case "pi": {
      // A stream may lack its session header (pi before 0.45 in json mode, an RPC transcript): read it all the same.
      const reducer = new PiReducer({ cwd, emit, expectHeader: false });
      const verdict = () => {
        const reading = reducer.reduction();
        const envelope = { check: null, delivered: envelopeFromTool(ENVELOPE_TOOL, reading.envelope, reading.envelopeError), nudges: 0 };
        return judge({ agent, reduction: reading, proc: NO_PROCESS, envelope }).verdict;
      };
      return { reducer, verdict };
    }
  }
}
